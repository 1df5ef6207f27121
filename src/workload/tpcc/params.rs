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
#[serde(try_from = "Recorded")]
pub struct Params {
    pub warehouses: u32,
    pub loaders: u32,
    /// Transactions per client in `tpcc.run`; 0 runs for the plan's
    /// write duration.
    #[serde(default)]
    pub transactions: u64,
    pub population: Population,
}

/// Each key's range: what `[tpcc]` accepts, and what a plan read back
/// from a run's record must hold. The population departs from the
/// specification's downwards only; orders at least ten a district, so
/// that 30% of them are new orders.
const RANGES: [(&str, i64, i64); 7] = {
    let s = Population::SPEC;
    [
        ("warehouses", 1, 100_000),
        ("loaders", 1, 64),
        ("transactions", 0, 1 << 40),
        ("items", 1, s.items as i64),
        ("districts", 1, s.districts as i64),
        ("customers", 1, s.customers as i64),
        ("orders", 10, s.orders as i64),
    ]
};

/// [`Params`] as a run's record keeps it, before its ranges are checked:
/// a record is a file another hand may have edited, and a population of 0
/// items would divide by zero in every client.
#[derive(Deserialize)]
struct Recorded {
    warehouses: u32,
    loaders: u32,
    #[serde(default)]
    transactions: u64,
    population: Population,
}

/// Why a recorded `[tpcc]` is refused.
#[derive(Debug, thiserror::Error)]
pub enum BadRecord {
    #[error("the recorded [tpcc] {key} = {value} is outside {min} to {max}: the record was edited; run the plan again")]
    OutOfRange {
        key: &'static str,
        value: i64,
        min: i64,
        max: i64,
    },
    #[error("the recorded [tpcc] orders = {orders} is more than customers = {customers}: the record was edited; run the plan again")]
    OrdersOverCustomers { orders: u32, customers: u32 },
}

impl TryFrom<Recorded> for Params {
    type Error = BadRecord;

    fn try_from(r: Recorded) -> Result<Params, BadRecord> {
        let p = &r.population;
        let values = [
            i64::from(r.warehouses),
            i64::from(r.loaders),
            r.transactions.min(i64::MAX as u64) as i64,
            i64::from(p.items),
            i64::from(p.districts),
            i64::from(p.customers),
            i64::from(p.orders),
        ];
        for (&(key, min, max), value) in RANGES.iter().zip(values) {
            if !(min..=max).contains(&value) {
                return Err(BadRecord::OutOfRange {
                    key,
                    value,
                    min,
                    max,
                });
            }
        }
        if p.orders > p.customers {
            return Err(BadRecord::OrdersOverCustomers {
                orders: p.orders,
                customers: p.customers,
            });
        }
        Ok(Params {
            warehouses: r.warehouses,
            loaders: r.loaders,
            transactions: r.transactions,
            population: r.population,
        })
    }
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
    let given = [
        &r.warehouses,
        &r.loaders,
        &r.transactions,
        &r.items,
        &r.districts,
        &r.customers,
        &r.orders,
    ];
    for (i, (raw, (what, min, max))) in given.into_iter().zip(RANGES).enumerate() {
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A record read back is range-checked as the plan was: 0 items
    /// would divide by zero in every client.
    #[test]
    fn a_recorded_population_out_of_range_is_refused() {
        let good = serde_json::to_value(Params::default()).unwrap();
        assert_eq!(
            serde_json::from_value::<Params>(good.clone()).unwrap(),
            Params::default()
        );
        let mut bad = good.clone();
        bad["population"]["items"] = 0.into();
        let e = serde_json::from_value::<Params>(bad)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("items = 0 is outside 1 to 100000") && e.contains("run the plan again"),
            "{e}"
        );
        let mut bad = good;
        bad["population"]["customers"] = 20.into();
        let e = serde_json::from_value::<Params>(bad)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("orders = 3000 is more than customers = 20"),
            "{e}"
        );
    }
}
