//! `[gate]`: the slowdown `relbench gate` lets through, for every step
//! (`slower = "5%"`) and per step or report group (`[gate.steps]`).

use serde::Deserialize;
use toml::Spanned;

use super::{Ctx, RawPlan};
use crate::plan::gate::Gate;
use crate::plan::Step;
use crate::util::did_you_mean;
use crate::workload::Group;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawGate {
    slower: Option<Spanned<toml::Value>>,
    steps: Option<std::collections::BTreeMap<Spanned<String>, Spanned<toml::Value>>>,
}

/// A percentage as the plan writes it, `"5%"`, as a fraction; an error
/// (said at `span`) for anything else.
fn percent(
    cx: &mut Ctx<'_>,
    v: &toml::Value,
    span: std::ops::Range<usize>,
    what: &str,
) -> Option<f64> {
    let parsed = v
        .as_str()
        .and_then(|s| s.trim().strip_suffix('%'))
        .and_then(|n| n.trim().parse::<f64>().ok())
        .filter(|p| *p > 0.0 && *p < 100.0);
    if parsed.is_none() {
        cx.err(
            span,
            format!("{what} must be a percentage above 0 and below 100, such as \"5%\", not {v}"),
            Some("the slowdown a step may show before the gate fails it".into()),
        );
    }
    parsed.map(|p| p / 100.0)
}

/// `[gate]`, checked against the plan's steps.
pub(super) fn gate(cx: &mut Ctx<'_>, raw: &RawPlan, steps: &[Step]) -> Gate {
    let mut g = Gate::default();
    let Some(r) = raw.gate.as_ref() else {
        return g;
    };
    if let Some(v) = &r.slower {
        if let Some(p) = percent(cx, v.get_ref(), v.span(), "[gate] slower") {
            g.slower = p;
        }
    }
    let Some(table) = &r.steps else { return g };
    let labels: Vec<String> = steps.iter().map(|s| s.label()).collect();
    let groups = Group::ALL.map(Group::name);
    for (k, v) in table {
        let (span, k) = (k.span(), k.get_ref());
        let known = labels.iter().any(|l| l == k) || groups.contains(&k.as_str());
        if !known {
            let names = labels.iter().map(String::as_str).chain(groups);
            cx.err(
                span,
                format!("[gate.steps] names \"{k}\", which is neither a step of this plan nor a report group"),
                Some(format!(
                    "{}the plan's steps: {}; the groups: {}",
                    did_you_mean(k, names)
                        .map(|d| format!("did you mean \"{d}\"? "))
                        .unwrap_or_default(),
                    labels.join(", "),
                    groups.join(", ")
                )),
            );
            continue;
        }
        if let Some(p) = percent(cx, v.get_ref(), v.span(), &format!("[gate.steps] {k}")) {
            g.per.push((k.clone(), p));
        }
    }
    g
}
