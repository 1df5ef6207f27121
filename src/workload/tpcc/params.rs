//! `[tpcc]`: TPC-C's scale as the plan writes it (warehouses, loaders),
//! and the population's departures from the specification, checked with
//! positions. Every departure is a value of [`Params`], which the run's
//! record keeps with the plan.

use serde::{Deserialize, Serialize};
use toml::Spanned;

use super::load::Population;
use crate::workload::check::{int, Ctx};

/// The `[tpcc]` keys, for `relbench list`.
pub const KEYS: [(&str, &str); 7] = [
    ("warehouses", "warehouses loaded (10, go-tpc's and sysbench-tpcc's default); client i's home warehouse is i mod warehouses + 1"),
    ("loaders", "tpcc.load's connections, each loading one warehouse at a time (as many as warehouses, at most 64)"),
    ("transactions", "transactions per client in tpcc.run; 0 runs for [duration] write (0)"),
    ("items", "items, and stock rows a warehouse (100000); fewer departs from the specification"),
    ("districts", "districts a warehouse (10); fewer departs from the specification"),
    ("customers", "customers a district (3000); fewer departs from the specification"),
    ("orders", "orders a district at the load, the last 30% new orders (3000); fewer departs from the specification"),
];

/// TPC-C's parameters: the scale, and the population each warehouse
/// holds (the specification's unless the plan says otherwise).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Params {
    pub warehouses: u32,
    pub loaders: u32,
    /// Transactions per client in `tpcc.run`; 0 runs for the plan's
    /// write duration.
    #[serde(default)]
    pub transactions: u64,
    pub population: Population,
}

impl Default for Params {
    fn default() -> Self {
        Params {
            warehouses: 10,
            loaders: 10,
            transactions: 0,
            population: Population::SPEC,
        }
    }
}

impl Params {
    /// The scale in words, for `relbench check`.
    pub fn describe(&self) -> String {
        let p = &self.population;
        let population = if *p == Population::SPEC {
            "the specification's population".to_string()
        } else {
            format!(
                "a population smaller than the specification's: {} items, {} districts, {} customers and {} orders a district",
                p.items, p.districts, p.customers, p.orders
            )
        };
        format!(
            "TPC-C {} warehouse{} ({population}); {} loader{}",
            self.warehouses,
            if self.warehouses == 1 { "" } else { "s" },
            self.loaders,
            if self.loaders == 1 { "" } else { "s" },
        )
    }

    /// The population's departures from the specification, by key, as
    /// the README and the record list them.
    pub fn departures(&self) -> Vec<String> {
        let (p, s) = (&self.population, &Population::SPEC);
        [
            ("items", p.items, s.items),
            ("districts", p.districts, s.districts),
            ("customers", p.customers, s.customers),
            ("orders", p.orders, s.orders),
        ]
        .into_iter()
        .filter(|(_, got, spec)| got != spec)
        .map(|(k, got, spec)| format!("{k} = {got} (the specification: {spec})"))
        .collect()
    }
}

/// `[tpcc]`, as written.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Raw {
    pub warehouses: Option<Spanned<i64>>,
    pub loaders: Option<Spanned<i64>>,
    pub transactions: Option<Spanned<i64>>,
    pub items: Option<Spanned<i64>>,
    pub districts: Option<Spanned<i64>>,
    pub customers: Option<Spanned<i64>>,
    pub orders: Option<Spanned<i64>>,
}

/// `[tpcc]`, checked, over the defaults.
pub fn check(cx: &mut Ctx<'_>, raw: Option<&Raw>) -> Params {
    let mut p = Params::default();
    let Some(r) = raw else { return p };
    let s = Population::SPEC;
    let mut v = [
        i64::from(p.warehouses),
        i64::from(p.loaders),
        0,
        i64::from(s.items),
        i64::from(s.districts),
        i64::from(s.customers),
        i64::from(s.orders),
    ];
    // Orders need at least ten a district, so that 30% of them are new
    // orders; customers at least one an order's owner draw can find.
    for (i, (raw, what, min, max)) in [
        (&r.warehouses, "warehouses", 1, 100_000),
        (&r.loaders, "loaders", 1, 64),
        (&r.transactions, "transactions", 0, 1 << 40),
        (&r.items, "items", 1, i64::from(s.items)),
        (&r.districts, "districts", 1, i64::from(s.districts)),
        (&r.customers, "customers", 1, i64::from(s.customers)),
        (&r.orders, "orders", 10, i64::from(s.orders)),
    ]
    .into_iter()
    .enumerate()
    {
        int(cx, raw, what, min, max, &mut v[i]);
    }
    p.transactions = v[2] as u64;
    let [warehouses, loaders, _, items, districts, customers, orders] = v.map(|n| n as u32);
    p.warehouses = warehouses;
    p.loaders = if r.loaders.is_some() {
        loaders
    } else {
        warehouses.min(64)
    };
    p.population = Population {
        items,
        districts,
        customers,
        orders,
    };
    if let (Some(o), true) = (
        r.orders.as_ref().or(r.customers.as_ref()),
        orders > customers,
    ) {
        cx.err(
            o.span(),
            format!("orders = {orders} is more than customers = {customers}"),
            Some("each order at the load belongs to its own customer (clause 4.3.3.1)".into()),
        );
    }
    p
}
