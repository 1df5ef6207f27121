//! `[linkbench]`: the benchmark's parameters as the plan writes them
//! (the original's property names), checked with positions.

use serde::Deserialize;
use toml::Spanned;

use super::model::Degree;
use super::{Op, Params};
use crate::workload::check::{int, number, Ctx};

/// `[linkbench]`: the original's property names.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Raw {
    pub startid1: Option<Spanned<i64>>,
    pub maxid1: Option<Spanned<i64>>,
    pub loaders: Option<Spanned<i64>>,
    pub requesters: Option<Spanned<i64>>,
    pub requests: Option<Spanned<i64>>,
    pub requestrate: Option<Spanned<i64>>,
    pub link_type_count: Option<Spanned<i64>>,
    pub nlinks_func: Option<Spanned<String>>,
    pub nlinks_default: Option<Spanned<i64>>,
    pub link_datasize: Option<Spanned<toml::Value>>,
    pub node_datasize: Option<Spanned<toml::Value>>,
    pub addlink: Option<Spanned<toml::Value>>,
    pub deletelink: Option<Spanned<toml::Value>>,
    pub updatelink: Option<Spanned<toml::Value>>,
    pub countlink: Option<Spanned<toml::Value>>,
    pub getlink: Option<Spanned<toml::Value>>,
    pub getlinklist: Option<Spanned<toml::Value>>,
    pub getnode: Option<Spanned<toml::Value>>,
    pub addnode: Option<Spanned<toml::Value>>,
    pub updatenode: Option<Spanned<toml::Value>>,
    pub deletenode: Option<Spanned<toml::Value>>,
    pub getlinklist_history: Option<Spanned<toml::Value>>,
    pub range_limit: Option<Spanned<i64>>,
    pub link_multiget_dist_min: Option<Spanned<i64>>,
    pub link_multiget_dist_max: Option<Spanned<i64>>,
    pub link_multiget_dist_prob: Option<Spanned<toml::Value>>,
    pub read_shape: Option<Spanned<toml::Value>>,
    pub read_uncorr_blend: Option<Spanned<toml::Value>>,
    pub write_shape: Option<Spanned<toml::Value>>,
    pub write_uncorr_blend: Option<Spanned<toml::Value>>,
    pub node_read_shape: Option<Spanned<toml::Value>>,
    pub node_update_shape: Option<Spanned<toml::Value>>,
    pub loader_chunk_size: Option<Spanned<i64>>,
    pub bulk_insert_batch: Option<Spanned<i64>>,
    pub check_ids: Option<Spanned<i64>>,
    pub count_type: Option<Spanned<String>>,
    pub load: Option<Spanned<String>>,
    pub tail_history: Option<Spanned<String>>,
}

/// `[linkbench]`, checked, over the original's defaults.
pub fn check(cx: &mut Ctx<'_>, raw: Option<&Raw>) -> Params {
    let mut p = Params::default();
    let Some(r) = raw else { return p };
    counts(cx, r, &mut p);
    choices(cx, r, &mut p);
    degree(cx, r, &mut p);
    reals(cx, r, &mut p);
    weights(cx, r, &mut p);
    p
}

/// The whole numbers: ids, clients, requests, batch sizes.
fn counts(cx: &mut Ctx<'_>, r: &Raw, p: &mut Params) {
    let mut ints = [
        p.startid1,
        p.maxid1,
        i64::from(p.loaders),
        i64::from(p.requesters),
        p.requests as i64,
        i64::from(p.requestrate),
        i64::from(p.link_type_count),
        i64::from(p.range_limit),
        i64::from(p.multiget_min),
        i64::from(p.multiget_max),
        i64::from(p.loader_chunk_size),
        i64::from(p.bulk_insert_batch),
        p.check_ids as i64,
    ];
    for (i, (v, what, min, max)) in [
        (&r.startid1, "startid1", 1, 1 << 40),
        (&r.maxid1, "maxid1", 2, 1 << 40),
        (&r.loaders, "loaders", 1, 1024),
        (&r.requesters, "requesters", 1, 1024),
        (&r.requests, "requests", 0, 1 << 40),
        (&r.requestrate, "requestrate", 0, 10_000_000),
        (&r.link_type_count, "link_type_count", 1, 1000),
        (&r.range_limit, "range_limit", 1, 1_000_000),
        (&r.link_multiget_dist_min, "link_multiget_dist_min", 1, 1024),
        (&r.link_multiget_dist_max, "link_multiget_dist_max", 1, 1024),
        (&r.loader_chunk_size, "loader_chunk_size", 1, 1_000_000),
        // 7 parameters a link: 4096 rows stay under SQLite's 32,766.
        (&r.bulk_insert_batch, "bulk_insert_batch", 1, 4096),
        (&r.check_ids, "check_ids", 1, 1 << 40),
    ]
    .into_iter()
    .enumerate()
    {
        int(cx, v, what, min, max, &mut ints[i]);
    }
    let [startid1, maxid1, loaders, requesters, requests, requestrate, types, range_limit, mg_min, mg_max, chunk, batch, check] =
        ints;
    p.startid1 = startid1;
    p.maxid1 = maxid1;
    (p.loaders, p.requesters) = (loaders as u32, requesters as u32);
    (p.requests, p.requestrate) = (requests as u64, requestrate as u32);
    p.link_type_count = types as u32;
    p.range_limit = range_limit as u32;
    (p.multiget_min, p.multiget_max) = (mg_min as u32, mg_max as u32);
    (p.loader_chunk_size, p.bulk_insert_batch) = (chunk as u32, batch as u32);
    p.check_ids = check as u64;
    if p.maxid1 <= p.startid1 {
        let span = r
            .maxid1
            .as_ref()
            .or(r.startid1.as_ref())
            .map_or(0..0, |v| v.span());
        cx.err(
            span,
            format!(
                "maxid1 = {} must be above startid1 = {}",
                p.maxid1, p.startid1
            ),
            Some("the load makes nodes startid1 .. maxid1 - 1".into()),
        );
    }
    if p.multiget_max < p.multiget_min {
        let span = r.link_multiget_dist_max.as_ref().map_or(0..0, |v| v.span());
        cx.err(
            span,
            "link_multiget_dist_max is below link_multiget_dist_min",
            None,
        );
    }
}

/// The load's method and the count column's type.
fn choices(cx: &mut Ctx<'_>, r: &Raw, p: &mut Params) {
    if let Some(bulk) = cx.choice(
        &r.load,
        "load",
        &[
            ("insert", false, "the original's multi-row upserts"),
            ("bulk", true, "LOAD DATA LOCAL INFILE / COPY"),
        ],
    ) {
        p.load_bulk = bulk;
    }
    if let Some(bigint) = cx.choice(
        &r.count_type,
        "count_type",
        &[
            ("int", false, "the original's DDL"),
            ("bigint", true, "Small Datum's"),
        ],
    ) {
        p.count_bigint = bigint;
    }
    if let Some(corrected) = cx.choice(
        &r.tail_history,
        "tail_history",
        &[
            (
                "original",
                false,
                "a list whose last page was read stays in the history's index (removeTailCacheEntry)",
            ),
            (
                "corrected",
                true,
                "a list whose last page was read is forgotten, and paged again when seen full",
            ),
        ],
    ) {
        p.tail_corrected = corrected;
    }
}

/// How many links each node has: the measured out-degrees, or a constant.
fn degree(cx: &mut Ctx<'_>, r: &Raw, p: &mut Params) {
    let nlinks_default = r.nlinks_default.as_ref().map(|v| (v, *v.get_ref()));
    match (r.nlinks_func.as_ref(), nlinks_default) {
        (None, None) => {}
        (Some(f), d) if f.get_ref() == "real" => {
            if let Some((v, _)) = d {
                cx.err(v.span(), "nlinks_default is for nlinks_func = \"const\"", Some("remove it, or set nlinks_func = \"const\"".into()));
            }
        }
        (Some(f), Some((v, n))) if f.get_ref() == "const" => {
            if (0..=1_000_000).contains(&n) {
                p.degree = Degree::Const(n as u32);
            } else {
                cx.err(v.span(), format!("nlinks_default must be from 0 to 1000000, not {n}"), None);
            }
        }
        (Some(f), None) if f.get_ref() == "const" => cx.err(
            f.span(),
            "nlinks_func = \"const\" needs nlinks_default, the links of every node",
            Some("for example nlinks_default = 4".into()),
        ),
        (Some(f), _) => cx.err(
            f.span(),
            format!("unknown nlinks_func \"{}\"", f.get_ref()),
            Some("\"real\" (the measured out-degrees, the original's default) or \"const\" with nlinks_default".into()),
        ),
        (None, Some((v, _))) => cx.err(
            v.span(),
            "nlinks_default is for nlinks_func = \"const\"",
            Some("add nlinks_func = \"const\"".into()),
        ),
    }
}

/// The sizes, shapes and blends.
fn reals(cx: &mut Ctx<'_>, r: &Raw, p: &mut Params) {
    for (v, what, max, out) in [
        (
            &r.link_datasize,
            "link_datasize",
            255.0,
            &mut p.link_datasize,
        ),
        (
            &r.node_datasize,
            "node_datasize",
            1048576.0,
            &mut p.node_datasize,
        ),
        (
            &r.getlinklist_history,
            "getlinklist_history",
            100.0,
            &mut p.getlinklist_history,
        ),
        (
            &r.link_multiget_dist_prob,
            "link_multiget_dist_prob",
            1.0,
            &mut p.multiget_p,
        ),
        (&r.read_shape, "read_shape", 10.0, &mut p.read_shape),
        (
            &r.read_uncorr_blend,
            "read_uncorr_blend",
            100.0,
            &mut p.read_uncorr_blend,
        ),
        (&r.write_shape, "write_shape", 10.0, &mut p.write_shape),
        (
            &r.write_uncorr_blend,
            "write_uncorr_blend",
            100.0,
            &mut p.write_uncorr_blend,
        ),
        (
            &r.node_read_shape,
            "node_read_shape",
            10.0,
            &mut p.node_read_shape,
        ),
        (
            &r.node_update_shape,
            "node_update_shape",
            10.0,
            &mut p.node_update_shape,
        ),
    ] {
        if let Some(x) = v.as_ref().and_then(|v| number(cx, v, what, 0.0, max)) {
            *out = x;
        }
    }
    if p.multiget_p <= 0.0 {
        let span = r
            .link_multiget_dist_prob
            .as_ref()
            .map_or(0..0, |v| v.span());
        cx.err(span, "link_multiget_dist_prob must be above 0", None);
    }
}

/// The operations' weights.
fn weights(cx: &mut Ctx<'_>, r: &Raw, p: &mut Params) {
    let weights = [
        &r.addnode,
        &r.updatenode,
        &r.deletenode,
        &r.getnode,
        &r.addlink,
        &r.deletelink,
        &r.updatelink,
        &r.countlink,
        &r.getlink,
        &r.getlinklist,
    ];
    let mut any = None;
    for (i, v) in weights.iter().enumerate() {
        if let Some(v) = v {
            any = Some(v.span());
            if let Some(x) = number(cx, v, Op::ALL[i].key(), 0.0, 1e9) {
                p.mix[i] = x;
            }
        }
    }
    if let Some(span) = any {
        if p.mix.iter().sum::<f64>() <= 0.0 {
            cx.err(
                span,
                "the operation weights add to 0: no request would run",
                Some("give at least one of addnode … getlinklist a weight above 0".into()),
            );
        }
    }
}
