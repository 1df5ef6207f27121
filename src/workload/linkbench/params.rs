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

/// Each whole number's range, in [`count_values`]' order: what
/// `[linkbench]` accepts, and what a plan read back from a run's record
/// must hold.
const COUNTS: [(&str, i64, i64); 13] = [
    ("startid1", 1, 1 << 40),
    ("maxid1", 2, 1 << 40),
    ("loaders", 1, 1024),
    ("requesters", 1, 1024),
    ("requests", 0, 1 << 40),
    ("requestrate", 0, 10_000_000),
    ("link_type_count", 1, 1000),
    ("range_limit", 1, 1_000_000),
    ("link_multiget_dist_min", 1, 1024),
    ("link_multiget_dist_max", 1, 1024),
    ("loader_chunk_size", 1, 1_000_000),
    // 7 parameters a link: 4096 rows stay under SQLite's 32,766.
    ("bulk_insert_batch", 1, 4096),
    ("check_ids", 1, 1 << 40),
];

/// The most links `nlinks_func = "const"` may give a node.
const MAX_DEGREE: u32 = 1_000_000;
/// The largest weight of an operation.
const MAX_WEIGHT: f64 = 1e9;

/// The whole numbers of `p`, in [`COUNTS`]' order.
fn count_values(p: &Params) -> [i64; 13] {
    [
        p.startid1,
        p.maxid1,
        i64::from(p.loaders),
        i64::from(p.requesters),
        p.requests.min(i64::MAX as u64) as i64,
        i64::from(p.requestrate),
        i64::from(p.link_type_count),
        i64::from(p.range_limit),
        i64::from(p.multiget_min),
        i64::from(p.multiget_max),
        i64::from(p.loader_chunk_size),
        i64::from(p.bulk_insert_batch),
        p.check_ids.min(i64::MAX as u64) as i64,
    ]
}

/// The largest each real may be (the least is 0), in [`real_values`]'
/// order.
const REALS: [(&str, f64); 10] = [
    ("link_datasize", 255.0),
    ("node_datasize", 1048576.0),
    ("getlinklist_history", 100.0),
    ("link_multiget_dist_prob", 1.0),
    ("read_shape", 10.0),
    ("read_uncorr_blend", 100.0),
    ("write_shape", 10.0),
    ("write_uncorr_blend", 100.0),
    ("node_read_shape", 10.0),
    ("node_update_shape", 10.0),
];

/// The reals of `p`, in [`REALS`]' order.
fn real_values(p: &mut Params) -> [&mut f64; 10] {
    [
        &mut p.link_datasize,
        &mut p.node_datasize,
        &mut p.getlinklist_history,
        &mut p.multiget_p,
        &mut p.read_shape,
        &mut p.read_uncorr_blend,
        &mut p.write_shape,
        &mut p.write_uncorr_blend,
        &mut p.node_read_shape,
        &mut p.node_update_shape,
    ]
}

/// The whole numbers: ids, clients, requests, batch sizes.
fn counts(cx: &mut Ctx<'_>, r: &Raw, p: &mut Params) {
    let mut ints = count_values(p);
    let given = [
        &r.startid1,
        &r.maxid1,
        &r.loaders,
        &r.requesters,
        &r.requests,
        &r.requestrate,
        &r.link_type_count,
        &r.range_limit,
        &r.link_multiget_dist_min,
        &r.link_multiget_dist_max,
        &r.loader_chunk_size,
        &r.bulk_insert_batch,
        &r.check_ids,
    ];
    for (i, (v, (what, min, max))) in given.into_iter().zip(COUNTS).enumerate() {
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
            if (0..=i64::from(MAX_DEGREE)).contains(&n) {
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
    let given = [
        &r.link_datasize,
        &r.node_datasize,
        &r.getlinklist_history,
        &r.link_multiget_dist_prob,
        &r.read_shape,
        &r.read_uncorr_blend,
        &r.write_shape,
        &r.write_uncorr_blend,
        &r.node_read_shape,
        &r.node_update_shape,
    ];
    for ((v, (what, max)), out) in given.into_iter().zip(REALS).zip(real_values(p)) {
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
            if let Some(x) = number(cx, v, Op::ALL[i].key(), 0.0, MAX_WEIGHT) {
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

/// Why a recorded `[linkbench]` is refused.
#[derive(Debug, thiserror::Error)]
pub enum BadRecord {
    #[error("the recorded [linkbench] {key} = {value} is outside {min} to {max}: the record was edited; run the plan again")]
    OutOfRange {
        key: &'static str,
        value: f64,
        min: f64,
        max: f64,
    },
    #[error("the recorded [linkbench] {0}: the record was edited; run the plan again")]
    Inconsistent(&'static str),
}

/// A `[linkbench]` read back from a run's record, held to what the plan's
/// check holds it to: a record is a file another hand may have edited,
/// and `maxid1` at `startid1` leaves no id to draw in every client.
pub fn recorded(mut p: Params) -> Result<Params, BadRecord> {
    let out = |key, value: f64, min: f64, max: f64| BadRecord::OutOfRange {
        key,
        value,
        min,
        max,
    };
    for ((key, min, max), v) in COUNTS.into_iter().zip(count_values(&p)) {
        if !(min..=max).contains(&v) {
            return Err(out(key, v as f64, min as f64, max as f64));
        }
    }
    for ((key, max), v) in REALS.into_iter().zip(real_values(&mut p)) {
        if !(0.0..=max).contains(v) {
            return Err(out(key, *v, 0.0, max));
        }
    }
    for (op, &w) in Op::ALL.iter().zip(&p.mix) {
        if !(0.0..=MAX_WEIGHT).contains(&w) {
            return Err(out(op.key(), w, 0.0, MAX_WEIGHT));
        }
    }
    if let Degree::Const(n) = p.degree {
        if n > MAX_DEGREE {
            return Err(out(
                "nlinks_default",
                f64::from(n),
                0.0,
                f64::from(MAX_DEGREE),
            ));
        }
    }
    let broken = [
        (p.maxid1 <= p.startid1, "maxid1 is not above startid1"),
        (
            p.multiget_max < p.multiget_min,
            "link_multiget_dist_max is below link_multiget_dist_min",
        ),
        (
            p.multiget_p <= 0.0,
            "link_multiget_dist_prob is not above 0",
        ),
        (
            p.mix.iter().sum::<f64>() <= 0.0,
            "the operation weights add to 0",
        ),
    ];
    match broken.into_iter().find(|(b, _)| *b) {
        Some((_, why)) => Err(BadRecord::Inconsistent(why)),
        None => Ok(p),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A record read back is range-checked as the plan was: `maxid1` at
    /// `startid1` leaves no id to draw, a batch of 0 rows never loads.
    #[test]
    fn a_recorded_linkbench_out_of_range_is_refused() {
        let good = serde_json::to_value(Params::default()).unwrap();
        assert_eq!(
            serde_json::from_value::<Params>(good.clone()).unwrap(),
            Params::default()
        );
        let refused = |key: &str, v: serde_json::Value| {
            let mut bad = good.clone();
            bad[key] = v;
            serde_json::from_value::<Params>(bad)
                .unwrap_err()
                .to_string()
        };
        let e = refused("bulk_insert_batch", 0.into());
        assert!(
            e.contains("bulk_insert_batch = 0 is outside 1 to 4096")
                && e.contains("run the plan again"),
            "{e}"
        );
        let e = refused("maxid1", 1.into());
        assert!(e.contains("maxid1 = 1 is outside 2"), "{e}");
        let e = refused("startid1", 20_000_000.into());
        assert!(e.contains("maxid1 is not above startid1"), "{e}");
        let e = refused("read_shape", 11.0.into());
        assert!(e.contains("read_shape = 11 is outside 0 to 10"), "{e}");
        let e = refused("mix", serde_json::to_value([0.0; 10]).unwrap());
        assert!(e.contains("the operation weights add to 0"), "{e}");
    }
}
