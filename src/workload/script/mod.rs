//! SQL workloads a plan writes (`[[workload]]`): named statements bound
//! to random functions, a weighted mix of statements or of transactions,
//! what each must return. They run through the same engine as the
//! built-in ones: prepared once per connection, values drawn into buffers
//! the client keeps, no allocation per event.
//!
//! A plan's workloads are entries of its catalogue
//! (`workload::catalogue`), made from the plan's text
//! ([`Script::new`]) whenever the plan is read, from its file or from a
//! run's record.

pub mod spec;

use std::time::Instant;

use rand::Rng as _;
use rand_distr::{Distribution, Normal};

use super::dist::{Ids, Rng};
use super::{Client, ClientCtx, DurationClass, Group, Meta, Scale, ShownStatement, Workload};
use crate::db::{Conn, DbResult, Dialect, ErrorKind, Param, Stmt};
use crate::measure::Recorder;
pub use spec::{Bound, Gen, Returns, ScriptSpec, StatementSpec, TxSpec, Variants};

/// A plan's workload: its spec and what every step asks of it,
/// computed once.
#[derive(Debug)]
pub struct Script {
    pub spec: ScriptSpec,
    /// Statement names, then `begin` and `commit` when it has transactions.
    classes: Vec<String>,
    writes: bool,
}

impl Script {
    pub fn new(spec: &ScriptSpec) -> Script {
        let mut classes: Vec<String> = spec.statements.iter().map(|s| s.name.clone()).collect();
        if !spec.transactions.is_empty() {
            classes.push("begin".into());
            classes.push("commit".into());
        }
        let writes = spec
            .statements
            .iter()
            .any(|s| !spec::is_query(s.sql.for_dialect(Dialect::Mysql)));
        Script {
            spec: spec.clone(),
            classes,
            writes,
        }
    }
}

impl Workload for Script {
    fn meta(&self) -> Meta<'_> {
        Meta {
            name: &self.spec.name,
            group: Group::Custom,
            duration: if self.writes {
                DurationClass::Write
            } else {
                DurationClass::Read
            },
            about: &self.spec.about,
            transactional: !self.spec.transactions.is_empty(),
            classes: self.classes.iter().map(String::as_str).collect(),
            warms_up: true,
            creates_tables: false,
            // A statement of the plan's may delete: ids are not promised.
            removes_rows: self.writes,
            class_series: false,
        }
    }

    fn statements(&self, d: Dialect) -> Vec<ShownStatement<'_>> {
        self.spec
            .statements
            .iter()
            .zip(&self.classes)
            .map(|(s, class)| {
                let binds: Vec<String> = s
                    .bind
                    .iter()
                    .map(|(n, g)| format!(":{n} = {}", describe(g)))
                    .collect();
                ShownStatement {
                    class,
                    sql: format!(
                        "{} -- weight {}, returns {} rows{}{}",
                        spec::rewrite(s.sql.for_dialect(d), d),
                        s.weight,
                        s.returns,
                        if binds.is_empty() { "" } else { "; " },
                        binds.join(", ")
                    ),
                }
            })
            .collect()
    }

    fn rows_per_event(&self, _scale: &Scale) -> Option<u64> {
        None
    }

    fn setup(&self, d: Dialect) -> &[String] {
        self.spec.setup.for_dialect(d)
    }

    fn client(
        &self,
        conn: &mut dyn Conn,
        _more: Vec<Box<dyn Conn>>,
        d: Dialect,
        scale: &Scale,
        rng: Rng,
        ctx: &ClientCtx,
    ) -> DbResult<Box<dyn Client>> {
        let mut slots = Vec::with_capacity(self.spec.statements.len());
        for (i, s) in self.spec.statements.iter().enumerate() {
            let sql = s.sql.for_dialect(d);
            let stmt = conn.prepare(&spec::rewrite(sql, d))?;
            let order: Vec<usize> = spec::placeholders(sql)
                .iter()
                .map(|(_, name)| {
                    s.bind
                        .iter()
                        .position(|(n, _)| n == name)
                        .expect("every placeholder is bound (checked with the plan)")
                })
                .collect();
            slots.push(Slot {
                stmt,
                class: i,
                query: spec::is_query(sql),
                returns: s.returns,
                values: s
                    .bind
                    .iter()
                    .map(|(_, g)| Value::new(g, scale, ctx))
                    .collect(),
                order,
            });
        }
        let weights = |w: &mut dyn Iterator<Item = u32>| {
            let mut acc = 0u32;
            w.map(|x| {
                acc += x;
                acc
            })
            .collect::<Vec<u32>>()
        };
        let (choices, txs) = if self.spec.transactions.is_empty() {
            (
                weights(&mut self.spec.statements.iter().map(|s| s.weight)),
                Vec::new(),
            )
        } else {
            let txs = self
                .spec
                .transactions
                .iter()
                .map(|t| {
                    let idx: Vec<usize> = t
                        .statements
                        .iter()
                        .map(|n| {
                            self.spec
                                .statements
                                .iter()
                                .position(|s| &s.name == n)
                                .expect("transactions name statements (checked with the plan)")
                        })
                        .collect();
                    let write = idx.iter().any(|&i| !slots[i].query);
                    (idx, write)
                })
                .collect();
            (
                weights(&mut self.spec.transactions.iter().map(|t| t.weight)),
                txs,
            )
        };
        let n = self.spec.statements.len();
        Ok(Box::new(ScriptClient {
            slots,
            choices,
            txs,
            begin: n,
            commit: n + 1,
            rng,
        }))
    }
}

/// How `relbench show` prints a function.
fn describe(g: &Gen) -> String {
    let b = |b: &Bound| match b {
        Bound::Int(n) => n.to_string(),
        Bound::Rows => "rows".into(),
        Bound::Tables => "tables".into(),
    };
    match g {
        Gen::Uniform { lo, hi } => format!("uniform({}, {})", b(lo), b(hi)),
        Gen::Zipfian { lo, hi, s } => format!("zipfian({}, {}, {s})", b(lo), b(hi)),
        Gen::Pareto { lo, hi, alpha } => format!("pareto({}, {}, {alpha})", b(lo), b(hi)),
        Gen::Gaussian { mean, sd } => format!("gaussian({mean}, {sd})"),
        Gen::Hotset {
            lo,
            hi,
            hot,
            access,
        } => {
            format!("hotset({}, {}, {hot}, {access})", b(lo), b(hi))
        }
        Gen::Sequence { start } => format!("sequence({start})"),
        Gen::String { len, random_pct } => format!("string({len}, {random_pct})"),
    }
}

/// A placeholder's generator on one client, with its buffer.
enum Value {
    Ids {
        lo: i64,
        ids: Ids,
        v: i64,
    },
    Pareto {
        lo: f64,
        hi: f64,
        alpha: f64,
        v: i64,
    },
    Gaussian {
        normal: Normal<f64>,
        v: i64,
    },
    Sequence {
        next: i64,
        step: i64,
    },
    Str {
        len: usize,
        random: usize,
        buf: String,
    },
}

const LETTERS: &[u8] = b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";

impl Value {
    fn new(g: &Gen, scale: &Scale, ctx: &ClientCtx) -> Value {
        let b = |b: &Bound| match b {
            Bound::Int(n) => *n,
            Bound::Rows => scale.rows,
            Bound::Tables => i64::from(scale.tables),
        };
        let span = |lo: &Bound, hi: &Bound| (b(lo), (b(hi) - b(lo) + 1).max(1));
        match g {
            Gen::Uniform { lo, hi } => {
                let (lo, n) = span(lo, hi);
                Value::Ids {
                    lo,
                    ids: Ids::uniform(n),
                    v: 0,
                }
            }
            Gen::Zipfian { lo, hi, s } => {
                let (lo, n) = span(lo, hi);
                Value::Ids {
                    lo,
                    ids: Ids::zipfian(n, *s),
                    v: 0,
                }
            }
            Gen::Hotset {
                lo,
                hi,
                hot,
                access,
            } => {
                let (lo, n) = span(lo, hi);
                Value::Ids {
                    lo,
                    ids: Ids::hot_set(n, hot / 100.0, access / 100.0),
                    v: 0,
                }
            }
            Gen::Pareto { lo, hi, alpha } => Value::Pareto {
                lo: b(lo) as f64,
                hi: b(hi) as f64,
                alpha: *alpha,
                v: 0,
            },
            Gen::Gaussian { mean, sd } => Value::Gaussian {
                normal: Normal::new(*mean, sd.abs()).expect("a finite mean and sd"),
                v: 0,
            },
            Gen::Sequence { start } => Value::Sequence {
                // Interleaved with the other clients, so no value repeats;
                // the step's client count is not known here, so the stride
                // is wide enough for any (plans cap clients at 1024).
                next: start + i64::from(ctx.index),
                step: 1024,
            },
            Gen::String { len, random_pct } => Value::Str {
                len: *len as usize,
                random: (*len as usize * usize::from(*random_pct)).div_ceil(100),
                buf: String::with_capacity(*len as usize),
            },
        }
    }

    #[inline]
    fn draw(&mut self, rng: &mut Rng) {
        match self {
            Value::Ids { lo, ids, v } => *v = *lo - 1 + ids.sample(rng),
            Value::Pareto { lo, hi, alpha, v } => {
                // The bounded Pareto's inverse CDF.
                let u: f64 = rng.random();
                let (l, h) = (lo.max(1.0), hi.max(lo.max(1.0) + 1.0));
                let la = l.powf(*alpha);
                let ha = h.powf(*alpha);
                let x = (-(u * ha - u * la - ha) / (ha * la)).powf(-1.0 / *alpha);
                *v = x.floor() as i64;
            }
            Value::Gaussian { normal, v } => *v = normal.sample(rng).round() as i64,
            Value::Sequence { next, step } => *next += *step,
            Value::Str { len, random, buf } => {
                buf.clear();
                for _ in 0..*random {
                    buf.push(LETTERS[rng.random_range(0..LETTERS.len())] as char);
                }
                for _ in *random..*len {
                    buf.push('a');
                }
            }
        }
    }

    #[inline]
    fn param(&self) -> Param<'_> {
        match self {
            Value::Ids { v, .. } | Value::Pareto { v, .. } | Value::Gaussian { v, .. } => {
                Param::Int(*v)
            }
            // The value drawn last: `next` already moved past it.
            Value::Sequence { next, step } => Param::Int(*next - *step),
            Value::Str { buf, .. } => Param::Str(buf),
        }
    }
}

struct Slot {
    stmt: Stmt,
    class: usize,
    query: bool,
    returns: Returns,
    values: Vec<Value>,
    /// For each placeholder, in order, the index of its value.
    order: Vec<usize>,
}

struct ScriptClient {
    slots: Vec<Slot>,
    /// Cumulative weights of the statements (no transactions) or of the
    /// transactions.
    choices: Vec<u32>,
    /// Each transaction's statements, and whether it writes.
    txs: Vec<(Vec<usize>, bool)>,
    begin: usize,
    commit: usize,
    rng: Rng,
}

impl ScriptClient {
    fn pick(&mut self) -> usize {
        let total = *self.choices.last().expect("a mix has an entry");
        let r = self.rng.random_range(0..total);
        self.choices.partition_point(|&c| c <= r)
    }

    fn run(&mut self, conn: &mut dyn Conn, rec: &mut Recorder, i: usize) -> Result<(), ErrorKind> {
        let slot = &mut self.slots[i];
        for v in &mut slot.values {
            v.draw(&mut self.rng);
        }
        let mut params = [Param::Int(0); spec::MAX_PARAMS];
        for (p, &vi) in params.iter_mut().zip(&slot.order) {
            *p = slot.values[vi].param();
        }
        let params = &params[..slot.order.len()];
        let start = Instant::now();
        let got = if slot.query {
            conn.query(slot.stmt, params)
        } else {
            conn.exec(slot.stmt, params)
        };
        match got {
            Ok(n) if slot.returns.holds(n) => {
                rec.statement(slot.class, start.elapsed());
                Ok(())
            }
            Ok(n) => {
                let want = slot.returns;
                rec.error(slot.class, ErrorKind::WrongResult, || {
                    format!("expected {want} rows, got {n}")
                });
                Err(ErrorKind::WrongResult)
            }
            Err(e) => {
                rec.error(slot.class, e.kind, || e.message);
                Err(e.kind)
            }
        }
    }

    fn timed(
        rec: &mut Recorder,
        class: usize,
        f: impl FnOnce() -> DbResult<()>,
    ) -> Result<(), ErrorKind> {
        let start = Instant::now();
        match f() {
            Ok(()) => {
                rec.statement(class, start.elapsed());
                Ok(())
            }
            Err(e) => {
                rec.error(class, e.kind, || e.message);
                Err(e.kind)
            }
        }
    }
}

impl Client for ScriptClient {
    fn event(&mut self, conn: &mut dyn Conn, rec: &mut Recorder) -> Result<(), ErrorKind> {
        let choice = self.pick();
        if self.txs.is_empty() {
            return self.run(conn, rec, choice);
        }
        let write = self.txs[choice].1;
        Self::timed(rec, self.begin, || conn.begin(write))?;
        let n = self.txs[choice].0.len();
        let mut r = Ok(());
        for k in 0..n {
            let i = self.txs[choice].0[k];
            r = self.run(conn, rec, i);
            if r.is_err() {
                break;
            }
        }
        let r = r.and_then(|_| Self::timed(rec, self.commit, || conn.commit()));
        if r.is_err() {
            // The error is already recorded; a failed rollback only means
            // the server ended the transaction itself.
            let _ = conn.rollback();
        }
        r
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::dist;

    /// The mix follows the weights within a percentage point over 100,000
    /// picks (seeded).
    #[test]
    fn the_mix_follows_the_weights() {
        let mut c = ScriptClient {
            slots: Vec::new(),
            choices: vec![10, 40, 100],
            txs: Vec::new(),
            begin: 0,
            commit: 0,
            rng: dist::rng(7, 1),
        };
        let mut n = [0u32; 3];
        for _ in 0..100_000 {
            n[c.pick()] += 1;
        }
        for (got, want) in n.iter().zip([10.0, 30.0, 60.0]) {
            let pct = f64::from(*got) / 1000.0;
            assert!((pct - want).abs() < 1.0, "{n:?}");
        }
    }

    #[test]
    fn bounded_pareto_and_sequences_stay_in_range() {
        let mut rng = dist::rng(1, 2);
        let mut p = Value::Pareto {
            lo: 1.0,
            hi: 1000.0,
            alpha: 1.16,
            v: 0,
        };
        for _ in 0..10_000 {
            p.draw(&mut rng);
            let Param::Int(v) = p.param() else { panic!() };
            assert!((1..=1000).contains(&v), "{v}");
        }
        let mut s = Value::Sequence {
            next: 5,
            step: 1024,
        };
        s.draw(&mut rng);
        assert_eq!(s.param(), Param::Int(5));
        s.draw(&mut rng);
        assert_eq!(s.param(), Param::Int(5 + 1024));
    }
}
