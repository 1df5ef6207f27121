//! TPC-C's three steps as catalogue entries: `tpcc.load` (the initial
//! population, a warehouse per loader at a time; rows/s), `tpcc.run` (the
//! five transactions, each client at its home warehouse; transactions/s,
//! with each transaction's latency under its own class) and `tpcc.check`
//! (consistency conditions 1–4 after the run).

use std::any::Any;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Instant;

use super::client::TpccClient;
use super::load::{self, Population};
use super::params::Params;
use super::rand::Constants;
use super::{check, schema};
use crate::db::{Conn, DbResult, Dialect, ErrorKind};
use crate::measure::{Recorder, Tally};
use crate::workload::dist::{rng, Rng};
use crate::workload::{
    record_error, Client, ClientCtx, DurationClass, Group, Meta, Scale, ShownStatement, Tables,
    Workload,
};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Load,
    Run,
    Check,
}

/// The steps by name.
pub const KINDS: [(&str, Kind); 3] = [
    ("tpcc.load", Kind::Load),
    ("tpcc.run", Kind::Run),
    ("tpcc.check", Kind::Check),
];

/// The suite's sequence: load, let the engine write back, the
/// transactions, the consistency check.
pub const SEQUENCE: [&str; 4] = ["tpcc.load", "settle", "tpcc.run", "tpcc.check"];

/// `tpcc.load`'s classes: the item table, a warehouse with all it holds.
pub const LOAD_CLASSES: [&str; 2] = ["load_items", "load_warehouse"];
/// `tpcc.check`'s class.
pub const CHECK_CLASSES: [&str; 1] = ["check"];
/// `tpcc.run`'s classes: the transactions, in [`Tx::ALL`]'s order.
pub const TX_CLASSES: [&str; 5] = [
    "new-order",
    "payment",
    "order-status",
    "delivery",
    "stock-level",
];

/// The seed of NURand's constants: the same for the load and every run,
/// so that the run's C_LAST keeps the distance from the load's that
/// clause 2.1.6.1 asks, and two targets' runs ask for the same rows.
const CONSTANTS_SEED: u64 = 0x7CC0;

/// The run's NURand constants (and the load's C_LAST).
pub fn constants() -> Constants {
    Constants::draw(&mut rng(CONSTANTS_SEED, 0))
}

/// One step of the benchmark, with the plan's parameters.
pub struct Step {
    pub name: &'static str,
    pub kind: Kind,
    pub params: Params,
}

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

/// Which TPC-C step a workload name is.
pub fn kind(name: &str) -> Option<Kind> {
    KINDS.iter().find(|(n, _)| *n == name).map(|&(_, k)| k)
}

/// Rows a warehouse holds after the load, about (order lines 10 an order).
fn rows_per_warehouse(p: &Population) -> u64 {
    let (d, c, o) = (
        u64::from(p.districts),
        u64::from(p.customers),
        u64::from(p.orders),
    );
    1 + u64::from(p.items) + d * (1 + 2 * c + o * 11 + o * 3 / 10)
}

impl Workload for Step {
    fn meta(&self) -> Meta<'_> {
        let (about, classes, duration) = match self.kind {
            Kind::Load => (
                "TPC-C: the initial population (clause 4.3.3.1), the items once, then a warehouse with its stock, districts, customers, history and orders per loader at a time",
                LOAD_CLASSES.to_vec(),
                DurationClass::Insert,
            ),
            Kind::Run => (
                "TPC-C: one transaction dealt from the mix (new-order 45, payment 43, order-status, delivery and stock-level 4 in every 100) at the client's home warehouse",
                TX_CLASSES.to_vec(),
                DurationClass::Write,
            ),
            Kind::Check => (
                "TPC-C: consistency conditions 1–4 (clause 3.3.2) over every warehouse and district",
                CHECK_CLASSES.to_vec(),
                DurationClass::Read,
            ),
        };
        Meta {
            name: self.name,
            group: Group::Tpcc,
            duration,
            about,
            transactional: self.kind == Kind::Run,
            classes,
            warms_up: self.kind == Kind::Run,
            creates_tables: self.kind == Kind::Load,
            removes_rows: false,
            class_series: self.kind == Kind::Run,
        }
    }

    fn statements(&self, d: Dialect) -> Vec<ShownStatement<'_>> {
        let show = |class: &'static str, sql: String| ShownStatement { class, sql };
        match self.kind {
            Kind::Load => {
                let mut out: Vec<ShownStatement> = schema::create(d, "")
                    .into_iter()
                    .map(|s| show("create", s))
                    .collect();
                for t in schema::TABLES {
                    out.push(show(
                        if t == "item" {
                            "load_items"
                        } else {
                            "load_warehouse"
                        },
                        format!("INSERT INTO {t} VALUES (…), (…), … -- up to 200 rows a statement"),
                    ));
                }
                out
            }
            Kind::Run => super::sql::shown(d)
                .into_iter()
                .map(|(tx, sql)| show(tx, sql))
                .collect(),
            Kind::Check => check::queries().map(|q| show("check", q.into())).collect(),
        }
    }

    fn rows_per_event(&self, _scale: &Scale) -> Option<u64> {
        None
    }

    fn tables(&self, _scale: &Scale, _clients: u32) -> Option<Tables> {
        let p = &self.params;
        Some(Tables {
            names: schema::TABLES.iter().map(|t| t.to_string()).collect(),
            rows: u64::from(p.warehouses) * rows_per_warehouse(&p.population),
        })
    }

    fn clients(&self) -> Option<u32> {
        match self.kind {
            Kind::Load => Some(self.params.loaders),
            Kind::Run => None,
            Kind::Check => Some(1),
        }
    }

    fn counts_rows(&self) -> bool {
        self.kind == Kind::Load
    }

    fn shared(&self, _scale: &Scale, clients: u32) -> Vec<Option<Arc<dyn Any + Send + Sync>>> {
        // One queue of work for all loaders: the items, then warehouses.
        let one: Arc<dyn Any + Send + Sync> = Arc::new(Shared::default());
        (0..clients).map(|_| Some(one.clone())).collect()
    }

    fn events(&self, _scale: &Scale, clients: u32) -> Option<u64> {
        let p = &self.params;
        match self.kind {
            Kind::Load => Some(1 + u64::from(p.warehouses)),
            Kind::Run => (p.transactions > 0).then(|| p.transactions * u64::from(clients)),
            Kind::Check => Some(1),
        }
    }

    fn client(
        &self,
        conn: &mut dyn Conn,
        _more: Vec<Box<dyn Conn>>,
        d: Dialect,
        _scale: &Scale,
        rng: Rng,
        ctx: &ClientCtx,
    ) -> DbResult<Box<dyn Client>> {
        let p = &self.params;
        Ok(match self.kind {
            Kind::Load => {
                let shared = ctx
                    .shared
                    .clone()
                    .and_then(|s| s.downcast::<Shared>().ok())
                    .expect("TPC-C's shared state");
                Box::new(Loader::new(conn, d, p, rng, ctx, shared)?)
            }
            Kind::Run => Box::new(TpccClient::new(
                conn,
                d,
                ctx.index % p.warehouses.max(1) + 1,
                p.warehouses,
                p.population,
                constants(),
                rng,
            )?),
            Kind::Check => Box::new(Checker {
                warehouses: p.warehouses,
            }),
        })
    }
}

/// What the loaders share: the next work item, and whether the tables
/// exist yet.
#[derive(Default)]
pub struct Shared {
    next: AtomicU64,
    created: AtomicBool,
}

/// `tpcc.load`: work item 0 is the item table, item k the warehouse k.
struct Loader {
    p: Params,
    c: Constants,
    rng: Rng,
    shared: Arc<Shared>,
}

impl Loader {
    fn new(
        conn: &mut dyn Conn,
        d: Dialect,
        p: &Params,
        rng: Rng,
        ctx: &ClientCtx,
        shared: Arc<Shared>,
    ) -> DbResult<Loader> {
        crate::workload::tables_made_once(ctx.index, &shared.created, "TPC-C's", || {
            for s in schema::create(d, &ctx.table_options) {
                conn.batch(&s)?;
            }
            Ok(())
        })?;
        Ok(Loader {
            p: *p,
            c: constants(),
            rng,
            shared,
        })
    }
}

impl Client for Loader {
    fn event(&mut self, conn: &mut dyn Conn, rec: &mut Recorder) -> Result<(), ErrorKind> {
        let k = self.shared.next.fetch_add(1, Ordering::Relaxed);
        if k > u64::from(self.p.warehouses) {
            return Ok(());
        }
        let class = usize::from(k > 0);
        let t = Instant::now();
        let rows = if k == 0 {
            load::items(conn, &mut self.rng, &self.p.population)
        } else {
            load::warehouse(conn, &mut self.rng, &self.c, &self.p.population, k as u32)
        }
        .map_err(|e| record_error(rec, class, e))?;
        rec.statement(class, t.elapsed());
        rec.tally(class, Tally::Rows, rows);
        Ok(())
    }
}

/// `tpcc.check`: the four conditions; what breaks them is the step's
/// wrong result, named.
struct Checker {
    warehouses: u32,
}

impl Client for Checker {
    fn event(&mut self, conn: &mut dyn Conn, rec: &mut Recorder) -> Result<(), ErrorKind> {
        let t = Instant::now();
        let broken = check::violations(conn).map_err(|e| record_error(rec, 0, e))?;
        rec.statement(0, t.elapsed());
        rec.tally(0, Tally::Rows, u64::from(self.warehouses));
        if !broken.is_empty() {
            rec.tally(0, Tally::Wrong, broken.len() as u64);
            rec.error(0, ErrorKind::WrongResult, || broken.join("; "));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::super::mix::Tx;
    use super::*;

    #[test]
    fn the_classes_are_the_transactions_names() {
        assert_eq!(Tx::ALL.map(Tx::name), TX_CLASSES);
    }

    #[test]
    fn the_load_counts_the_items_and_each_warehouse() {
        let p = Params {
            warehouses: 3,
            ..Params::default()
        };
        let s = steps(&p);
        let scale = Scale::probe();
        assert_eq!(s[0].events(&scale, 3), Some(4));
        assert_eq!(s[1].events(&scale, 3), None, "by time");
        assert_eq!(s[2].events(&scale, 1), Some(1));
        assert_eq!(s[0].clients(), Some(10));
        // The spec's warehouse: 100,000 stock rows, 30,000 customers and
        // as many history rows and orders, ~300,000 order lines.
        let rows = rows_per_warehouse(&Population::SPEC);
        assert!((490_000..=530_000).contains(&rows), "{rows}");
    }

    #[test]
    fn every_step_shows_its_statements_in_each_dialect() {
        for s in steps(&Params::default()) {
            for d in Dialect::ALL {
                let shown = s.statements(d);
                assert!(!shown.is_empty(), "{} {d:?}", s.name);
                let classes = s.meta().classes;
                assert!(
                    shown
                        .iter()
                        .all(|x| x.class == "create" || classes.contains(&x.class)),
                    "{}",
                    s.name
                );
            }
        }
    }
}
