//! `[insert]`: the Insert Benchmark's sizes as the plan writes them,
//! checked with positions.

use serde::Deserialize;
use toml::Spanned;

use super::Params;
use crate::workload::check::{Ctx, MAX_ROWS};

/// The Insert Benchmark's sizes; `[scale] rows` is l.i0's rows per client.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Raw {
    pub l_i1_rows: Option<Spanned<i64>>,
    pub l_i2_rows: Option<Spanned<i64>>,
    pub l_i0_commit: Option<Spanned<i64>>,
    pub l_i1_commit: Option<Spanned<i64>>,
    pub l_i2_commit: Option<Spanned<i64>>,
    pub q_commit: Option<Spanned<i64>>,
    pub data_min: Option<Spanned<i64>>,
    pub data_max: Option<Spanned<i64>>,
    pub data_random_pct: Option<Spanned<i64>>,
    pub shared_table: Option<bool>,
    pub q_pacing: Option<Spanned<String>>,
}

/// `[insert]`, checked, over the benchmark's defaults.
pub fn check(cx: &mut Ctx<'_>, raw: Option<&Raw>) -> Params {
    let mut p = Params::default();
    let Some(r) = raw else { return p };
    let mut set = |v: &Option<Spanned<i64>>, what: &str, max: i64, out: &mut i64| {
        if let Some(n) = v.as_ref().and_then(|v| cx.positive(v, what, max)) {
            *out = n;
        }
    };
    let mut rows = [p.l_i1_rows, p.l_i2_rows];
    set(&r.l_i1_rows, "l_i1_rows", MAX_ROWS, &mut rows[0]);
    set(&r.l_i2_rows, "l_i2_rows", MAX_ROWS, &mut rows[1]);
    let mut small = [
        p.l_i0_commit,
        p.l_i1_commit,
        p.l_i2_commit,
        p.q_commit,
        p.data_min,
        p.data_max,
    ]
    .map(i64::from);
    for (i, (v, what, max)) in [
        (&r.l_i0_commit, "l_i0_commit", 1000),
        (&r.l_i1_commit, "l_i1_commit", 1000),
        (&r.l_i2_commit, "l_i2_commit", 1000),
        (&r.q_commit, "q_commit", 1000),
        (&r.data_min, "data_min", 4000),
        (&r.data_max, "data_max", 4000),
    ]
    .into_iter()
    .enumerate()
    {
        set(v, what, max, &mut small[i]);
    }
    [p.l_i1_rows, p.l_i2_rows] = rows;
    p.shared_table = r.shared_table.unwrap_or(false);
    if let Some(burst) = cx.choice(
        &r.q_pacing,
        "q_pacing",
        &[
            (
                "burst",
                true,
                "iibench's: each second's commits back to back at its start",
            ),
            ("even", false, "evenly apart"),
        ],
    ) {
        p.q_burst = burst;
    }
    if let Some(v) = &r.data_random_pct {
        match u8::try_from(*v.get_ref()) {
            Ok(n) if n <= 100 => p.data_random_pct = n,
            _ => cx.err(
                v.span(),
                format!(
                    "data_random_pct must be between 0 and 100, not {}",
                    v.get_ref()
                ),
                Some("iibench's: the percent of each `data` value (× 0.75) that is random".into()),
            ),
        }
    }
    let [a, b, c, q, dmin, dmax] = small.map(|v| v as u32);
    (p.l_i0_commit, p.l_i1_commit, p.l_i2_commit, p.q_commit) = (a, b, c, q);
    (p.data_min, p.data_max) = (dmin, dmax);
    if p.data_min > p.data_max {
        let span = r.data_min.as_ref().map_or(0..0, |v| v.span());
        cx.err(
            span,
            format!(
                "data_min = {} is above data_max = {}",
                p.data_min, p.data_max
            ),
            Some("data_min is the shortest `data` value, data_max the longest".into()),
        );
    }
    p
}
