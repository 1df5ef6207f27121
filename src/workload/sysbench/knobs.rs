//! Parameters of the built-in microbenchmarks, as sysbench's own options
//! (`--point-selects`, `--order-ranges`, `--range-size`, `--skip-trx`,
//! `--rand-type`): a plan writes `read-only-order[order=4,range=1000]`
//! and gets the catalogue entry with those values. The name with its
//! parameters, in one canonical order, is the step's identity in results
//! and reports.
//!
//! The catalogue is `'static` data that every layer borrows; a
//! parameterised entry is made once per distinct name and kept for the
//! life of the process (a plan names a handful), so it is borrowed the
//! same way.

use std::borrow::Cow;

use super::{Col, Micro, Op, RangeKind, Tx, CATALOGUE};
use crate::workload::dist;

/// The parameters a step may give, each `None` where the catalogue's
/// value stands.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Knobs {
    pub points: Option<u32>,
    pub simple: Option<u32>,
    pub sum: Option<u32>,
    pub order: Option<u32>,
    pub distinct: Option<u32>,
    pub range: Option<u32>,
    pub inlist: Option<u32>,
    pub tx: Option<bool>,
    pub si: Option<bool>,
    pub dist: Option<dist::Kind>,
}

/// Every key, in the canonical order, with what it sets.
pub const KEYS: [(&str, &str); 10] = [
    (
        "points",
        "point selects per event (sysbench --point-selects)",
    ),
    ("simple", "plain ranges per event (--simple-ranges)"),
    ("sum", "SUM ranges per event (--sum-ranges)"),
    ("order", "ORDER BY ranges per event (--order-ranges)"),
    ("distinct", "DISTINCT ranges per event (--distinct-ranges)"),
    ("range", "rows per range (--range-size)"),
    ("inlist", "ids per IN list"),
    ("tx", "false: no transaction around the event (--skip-trx)"),
    (
        "si",
        "true: ranges and IN lists on the secondary index k, not the primary key",
    ),
    (
        "dist",
        "how ids are drawn: uniform, zipfian, hotset (--rand-type)",
    ),
];

/// The most of one statement kind per event, and the widest range.
const MAX_COUNT: u32 = 1000;
const MAX_RANGE: u32 = 1_000_000;

/// Why `base[key=value,…]` names no step, in words a plan error shows.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BadParameters {
    #[error("the brackets are empty; give parameters such as [order=4,range=1000], or leave the brackets out")]
    Empty,
    #[error("\"{0}\" is not key=value")]
    NotKeyValue(String),
    #[error("{key} takes a whole number from 0 to {max}, not \"{value}\"")]
    NotACount {
        key: String,
        max: u32,
        value: String,
    },
    #[error("{key} takes true or false, not \"{value}\"")]
    NotAFlag { key: String, value: String },
    #[error("range takes at least 1 row")]
    NoRows,
    #[error("inlist takes at least 1 id")]
    NoIds,
    #[error("dist takes {names}, not \"{given}\"", names = dist::Kind::NAMES.join(", "))]
    Dist { given: String },
    #[error("unknown parameter \"{given}\"; {}", match .did_you_mean {
        Some(m) => format!("did you mean \"{m}\"?"),
        None => format!("the parameters are {}", KEYS.map(|(n, _)| n).join(", ")),
    })]
    Unknown {
        given: String,
        did_you_mean: Option<String>,
    },
    #[error("{0} is given twice")]
    Twice(String),
    /// A parameter the step has nothing for (`why` says what it lacks).
    #[error("{step} {why}")]
    DoesNotApply { step: String, why: &'static str },
    #[error("\"{0}\" has no [parameters]")]
    NoParameters(String),
    #[error("the parameters end with ']'")]
    Unclosed,
    #[error("\"{given}\" is not a sysbench microbenchmark; {}", match .did_you_mean {
        Some(m) => format!("did you mean \"{m}\"?"),
        None => "only those take [parameters] (`relbench list`)".to_string(),
    })]
    NotAMicro {
        given: String,
        did_you_mean: Option<String>,
    },
}

impl Knobs {
    /// Parses `order=4,range=1000`.
    pub fn parse(s: &str) -> Result<Knobs, BadParameters> {
        let mut k = Knobs::default();
        if s.trim().is_empty() {
            return Err(BadParameters::Empty);
        }
        for part in s.split(',') {
            let Some((key, value)) = part.split_once('=') else {
                return Err(BadParameters::NotKeyValue(part.to_string()));
            };
            let (key, value) = (key.trim(), value.trim());
            let count = |max: u32| -> Result<Option<u32>, BadParameters> {
                match value.parse::<u32>() {
                    Ok(n) if n <= max => Ok(Some(n)),
                    _ => Err(BadParameters::NotACount {
                        key: key.to_string(),
                        max,
                        value: value.to_string(),
                    }),
                }
            };
            let flag = || -> Result<Option<bool>, BadParameters> {
                match value {
                    "true" => Ok(Some(true)),
                    "false" => Ok(Some(false)),
                    _ => Err(BadParameters::NotAFlag {
                        key: key.to_string(),
                        value: value.to_string(),
                    }),
                }
            };
            let slot_taken = match key {
                "points" => k.points.replace_with(count(MAX_COUNT)?),
                "simple" => k.simple.replace_with(count(MAX_COUNT)?),
                "sum" => k.sum.replace_with(count(MAX_COUNT)?),
                "order" => k.order.replace_with(count(MAX_COUNT)?),
                "distinct" => k.distinct.replace_with(count(MAX_COUNT)?),
                "range" => match count(MAX_RANGE)? {
                    Some(0) => return Err(BadParameters::NoRows),
                    r => k.range.replace_with(r),
                },
                "inlist" => match count(MAX_COUNT)? {
                    Some(0) => return Err(BadParameters::NoIds),
                    r => k.inlist.replace_with(r),
                },
                "tx" => k.tx.replace_with(flag()?),
                "si" => k.si.replace_with(flag()?),
                "dist" => {
                    let d = dist::Kind::parse(value).ok_or_else(|| BadParameters::Dist {
                        given: value.to_string(),
                    })?;
                    k.dist.replace(d).is_some()
                }
                other => {
                    let names = KEYS.iter().map(|(n, _)| *n);
                    return Err(BadParameters::Unknown {
                        given: other.to_string(),
                        did_you_mean: crate::util::did_you_mean(other, names).map(str::to_string),
                    });
                }
            };
            if slot_taken {
                return Err(BadParameters::Twice(key.to_string()));
            }
        }
        Ok(k)
    }

    /// `order=4,range=1000`: the keys given, in [`KEYS`] order.
    pub fn canonical(&self) -> String {
        let mut parts = Vec::new();
        let mut n = |key: &str, v: Option<String>| {
            if let Some(v) = v {
                parts.push(format!("{key}={v}"));
            }
        };
        n("points", self.points.map(|v| v.to_string()));
        n("simple", self.simple.map(|v| v.to_string()));
        n("sum", self.sum.map(|v| v.to_string()));
        n("order", self.order.map(|v| v.to_string()));
        n("distinct", self.distinct.map(|v| v.to_string()));
        n("range", self.range.map(|v| v.to_string()));
        n("inlist", self.inlist.map(|v| v.to_string()));
        n("tx", self.tx.map(|v| v.to_string()));
        n("si", self.si.map(|v| v.to_string()));
        n("dist", self.dist.map(|v| v.name().to_string()));
        parts.join(",")
    }

    /// The catalogue entry `base` with these values: its ops rebuilt, or
    /// why a parameter does not apply to it.
    fn apply(&self, base: &Micro) -> Result<(Vec<Op>, Tx), BadParameters> {
        let not = |why: &'static str| BadParameters::DoesNotApply {
            step: base.name.to_string(),
            why,
        };
        let has = |f: &dyn Fn(&Op) -> bool| base.ops.iter().any(f);
        let mut ops: Vec<Op> = base.ops.to_vec();
        if let Some(n) = self.points {
            if !has(&|o| matches!(o, Op::PointSelects(_))) {
                return Err(not("runs no point selects, so points does not apply"));
            }
            for o in &mut ops {
                if let Op::PointSelects(p) = o {
                    *p = n;
                }
            }
            // sysbench's --point-selects=0: none at all.
            ops.retain(|o| *o != Op::PointSelects(0));
        }
        let kinds = [self.simple, self.sum, self.order, self.distinct];
        if kinds.iter().any(Option::is_some) {
            let mixed = |o: &Op| {
                matches!(
                    o,
                    Op::Range {
                        col: Col::Id,
                        kind: RangeKind::Select("c")
                            | RangeKind::Sum
                            | RangeKind::Order
                            | RangeKind::Distinct,
                        ..
                    }
                )
            };
            if !has(&mixed) {
                return Err(not(
                    "has no mix of ranges, so simple, sum, order and distinct do not apply (use a read-only or \
                     read-write step)",
                ));
            }
            let size = ops
                .iter()
                .find_map(|o| match o {
                    Op::Range { size, .. } if mixed(o) => Some(*size),
                    _ => None,
                })
                .expect("checked");
            let count = |kind: RangeKind| {
                base.ops
                    .iter()
                    .filter(|o| matches!(o, Op::Range { col: Col::Id, kind: k, .. } if *k == kind))
                    .count() as u32
            };
            let wanted = [
                (
                    self.simple.unwrap_or(count(RangeKind::Select("c"))),
                    RangeKind::Select("c"),
                ),
                (self.sum.unwrap_or(count(RangeKind::Sum)), RangeKind::Sum),
                (
                    self.order.unwrap_or(count(RangeKind::Order)),
                    RangeKind::Order,
                ),
                (
                    self.distinct.unwrap_or(count(RangeKind::Distinct)),
                    RangeKind::Distinct,
                ),
            ];
            // The ranges where the first of them stood, in sysbench's
            // order: simple, sum, order, distinct.
            let at = ops.iter().position(mixed).expect("checked");
            ops.retain(|o| !mixed(o));
            let ranges: Vec<Op> = wanted
                .iter()
                .flat_map(|&(n, kind)| {
                    (0..n).map(move |_| Op::Range {
                        col: Col::Id,
                        size,
                        kind,
                    })
                })
                .collect();
            ops.splice(at..at, ranges);
        }
        if let Some(r) = self.range {
            if !has(&|o| matches!(o, Op::Range { .. })) {
                return Err(not("reads no ranges, so range does not apply"));
            }
            for o in &mut ops {
                if let Op::Range { size, .. } = o {
                    *size = r;
                }
            }
        }
        if let Some(n) = self.inlist {
            if !has(&|o| matches!(o, Op::InList { .. } | Op::UpdateInList(_))) {
                return Err(not("has no IN list, so inlist does not apply"));
            }
            for o in &mut ops {
                match o {
                    Op::InList { n: m, .. } | Op::UpdateInList(m) => *m = n,
                    _ => {}
                }
            }
        }
        if self.si == Some(true) {
            if !has(&|o| matches!(o, Op::Range { .. } | Op::InList { .. })) {
                return Err(not(
                    "reads no range or IN list, so si does not apply (point selects are by primary key)",
                ));
            }
            for o in &mut ops {
                match o {
                    Op::Range { col, .. } | Op::InList { col, .. } => *col = Col::K,
                    _ => {}
                }
            }
        }
        if ops.is_empty() {
            return Err(not("would run nothing per event"));
        }
        let writes = ops.iter().any(|o| {
            matches!(
                o,
                Op::UpdateIndex
                    | Op::UpdateNonIndex(_)
                    | Op::UpdateInList(_)
                    | Op::DeleteInsert
                    | Op::Delete
                    | Op::Insert
            )
        });
        let tx = match self.tx {
            None => base.tx,
            Some(false) => Tx::None,
            Some(true) if writes => Tx::Write,
            Some(true) => Tx::Read,
        };
        Ok((ops, tx))
    }
}

trait ReplaceWith<T> {
    /// Sets the value; whether one was there already.
    fn replace_with(&mut self, v: Option<T>) -> bool;
}

impl<T> ReplaceWith<T> for Option<T> {
    fn replace_with(&mut self, v: Option<T>) -> bool {
        let had = self.is_some();
        *self = v;
        had
    }
}

/// `base[key=value,…]`: the catalogue entry `base` with those parameters,
/// named canonically; or why not, in words a plan error can show. The
/// entry is the caller's to keep (a plan's catalogue holds it).
pub fn parameterised(name: &str) -> Result<Micro, BadParameters> {
    let Some((base_name, rest)) = name.split_once('[') else {
        return Err(BadParameters::NoParameters(name.to_string()));
    };
    let Some(inner) = rest.strip_suffix(']') else {
        return Err(BadParameters::Unclosed);
    };
    let base = CATALOGUE
        .iter()
        .find(|m| m.name == base_name)
        .ok_or_else(|| {
            let names = CATALOGUE.iter().map(|m| &*m.name);
            BadParameters::NotAMicro {
                given: base_name.to_string(),
                did_you_mean: crate::util::did_you_mean(base_name, names).map(str::to_string),
            }
        })?;
    let knobs = Knobs::parse(inner)?;
    let (ops, tx) = knobs.apply(base)?;
    Ok(Micro {
        name: Cow::Owned(format!("{base_name}[{}]", knobs.canonical())),
        group: base.group,
        about: Cow::Owned(format!("{} — with {}", base.about, knobs.canonical())),
        tx,
        ops: Cow::Owned(ops),
        ids: knobs.dist.or(base.ids),
    })
}

/// The canonical name of `name` (`read-only-order[range=1000,order=4]`
/// is `read-only-order[order=4,range=1000]`), or `name` itself.
pub fn canonical_name(name: &str) -> Result<String, BadParameters> {
    if name.contains('[') {
        Ok(parameterised(name)?.name.into_owned())
    } else {
        Ok(name.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::db::Dialect;
    use crate::workload::Workload;

    fn sql(name: &str) -> Vec<String> {
        let made;
        let w: &dyn Workload = match name.contains('[') {
            true => {
                made = parameterised(name).unwrap();
                &made
            }
            false => CATALOGUE.iter().find(|m| m.name == name).unwrap(),
        };
        // As `relbench show` prints it: the transaction, then each statement.
        let mut out = vec![format!("transaction: {}", w.meta().transactional)];
        out.extend(w.statements(Dialect::Mysql).into_iter().map(|s| s.sql));
        out
    }

    #[test]
    fn the_malloc_studys_read_only_mix_is_four_order_ranges_of_1000() {
        // sysbench oltp_read_only --order-ranges=4 --simple-ranges=0
        // --distinct-ranges=0 --sum-ranges=0 --range-size=1000
        let m =
            parameterised("read-only-10[simple=0,sum=0,distinct=0,order=4,range=1000]").unwrap();
        assert_eq!(
            m.name,
            "read-only-10[simple=0,sum=0,order=4,distinct=0,range=1000]"
        );
        let orders = m
            .ops
            .iter()
            .filter(|o| {
                matches!(
                    o,
                    Op::Range {
                        kind: RangeKind::Order,
                        size: 1000,
                        ..
                    }
                )
            })
            .count();
        assert_eq!(orders, 4);
        assert_eq!(m.ops.len(), 5, "{:?}", m.ops);
        assert_eq!(m.ops[0], Op::PointSelects(10));
        assert_eq!(m.tx, Tx::Read);
        // The same parameters in another order are the same step.
        let again =
            parameterised("read-only-10[range=1000,order=4,simple=0,sum=0,distinct=0]").unwrap();
        assert_eq!(m.name, again.name);
        assert_eq!(m.ops, again.ops);
    }

    #[test]
    fn every_parameter_changes_the_sql() {
        let cases = [
            ("read-only-10", "points=3"),
            ("read-only-10", "simple=2"),
            ("read-only-10", "sum=0"),
            ("read-only-10", "order=2"),
            ("read-only-10", "distinct=3"),
            ("read-only-10", "range=50"),
            ("random-points-10", "inlist=20"),
            ("read-only-10", "tx=false"),
            ("range-covered-pk", "si=true"),
        ];
        for (base, knob) in cases {
            let with = sql(&format!("{base}[{knob}]"));
            assert_ne!(with, sql(base), "{base}[{knob}]");
        }
        // dist changes which ids, not the SQL: it is the entry's own.
        let d = parameterised("point-query[dist=zipfian]").unwrap();
        assert_eq!(d.ids, Some(dist::Kind::Zipfian));
    }

    #[test]
    fn parameters_that_do_not_apply_say_why() {
        let err = |n: &str| parameterised(n).unwrap_err().to_string();
        assert!(err("point-query[order=4]").contains("has no mix of ranges"));
        assert!(err("update-index[range=10]").contains("reads no ranges"));
        assert!(err("read-only-10[ordr=4]").contains("did you mean \"order\""));
        assert!(err("read-only-10[order=x]").contains("whole number"));
        assert!(err("read-only-10[order=4,order=5]").contains("given twice"));
        assert!(err("read-only-10[]").contains("empty"));
        assert!(err("point-qeury[points=2]").contains("did you mean \"point-query\""));
        assert!(
            err("read-only-10[points=0,simple=0,sum=0,order=0,distinct=0]")
                .contains("nothing per event")
        );
    }
}
