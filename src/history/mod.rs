//! A study's history: every run kept in a database (`store`), read in as
//! series of builds (`import`: `relbench history add`), change points
//! found in them (`detect`, judged on every repeat, disturbed windows left
//! out, the A/A floor respected) and explained by the costs that moved
//! (`changes`: `history changes`, `history ack`), laid out over builds
//! (`report`), and a culprit found among ordered builds by measuring
//! them (`bisect`).

pub mod bisect;
pub mod changes;
pub mod detect;
pub mod import;
pub mod order;
pub mod report;
pub mod store;

use std::collections::HashMap;

use order::BuildOrder;
use store::Store;

/// A build as the history orders it.
#[derive(Debug, Clone, PartialEq)]
pub struct Build {
    pub id: i64,
    pub name: String,
    pub version: String,
    pub order: Option<f64>,
}

/// A series' identity and what it measures.
#[derive(Debug, Clone, PartialEq)]
pub struct SeriesInfo {
    pub id: i64,
    /// The step's identity: phase, step, occurrence, clients.
    pub step: String,
    /// The configuration's hash, and the configuration itself.
    pub config: String,
    pub config_text: String,
    /// The host's fingerprint.
    pub host: String,
    pub group: String,
    pub unit: String,
}

/// The history read whole: builds in order, every series with its
/// quiet repeats per build.
#[derive(Debug, Clone, Default)]
pub struct History {
    pub builds: Vec<Build>,
    pub series: Vec<SeriesInfo>,
    /// One per `series`, in the same order.
    pub data: Vec<detect::Series>,
    /// Repeats left out because another program disturbed their window.
    pub disturbed_left_out: usize,
    pub hosts: HashMap<String, String>,
}

impl History {
    pub fn read(store: &mut Store) -> anyhow::Result<History> {
        let mut builds = Vec::new();
        store.scan("SELECT id, name, version, ord FROM builds", &mut |r| {
            builds.push(Build {
                id: r[0].int().unwrap_or(0),
                name: r[1].text(),
                version: r[2].text(),
                order: r[3].real(),
            })
        })?;
        builds.sort_by(|a, b| {
            let o = |x: &Build| BuildOrder {
                name: x.name.clone(),
                order: x.order,
            };
            o(a).compare(&o(b))
        });
        let place: HashMap<i64, usize> =
            builds.iter().enumerate().map(|(i, b)| (b.id, i)).collect();
        let mut series = Vec::new();
        store.scan(
            "SELECT id, step, config, config_text, host, grp, unit FROM series ORDER BY id",
            &mut |r| {
                series.push(SeriesInfo {
                    id: r[0].int().unwrap_or(0),
                    step: r[1].text(),
                    config: r[2].text(),
                    config_text: r[3].text(),
                    host: r[4].text(),
                    group: r[5].text(),
                    unit: r[6].text(),
                })
            },
        )?;
        let index: HashMap<i64, usize> =
            series.iter().enumerate().map(|(i, s)| (s.id, i)).collect();
        // Per series: per build place, its quiet repeats; the floors seen.
        let mut values: Vec<Vec<(usize, Vec<f64>)>> = vec![Vec::new(); series.len()];
        let mut floors: Vec<Vec<f64>> = vec![Vec::new(); series.len()];
        let mut left_out = 0;
        store.scan(
            "SELECT series, build, throughputs, disturbed, floor FROM cells",
            &mut |r| {
                let (Some(si), Some(bi)) = (
                    r[0].int().and_then(|s| index.get(&s)),
                    r[1].int().and_then(|b| place.get(&b)),
                ) else {
                    return;
                };
                let Value::Text(t) = r[2] else { return };
                let d = r[3].text();
                let d = d.as_bytes();
                let mut quiet = Vec::with_capacity(4);
                for (i, v) in t.split(' ').enumerate() {
                    if d.get(i) == Some(&b'1') {
                        left_out += 1;
                        continue;
                    }
                    if let Ok(v) = v.parse::<f64>() {
                        quiet.push(v);
                    }
                }
                values[*si].push((*bi, quiet));
                if let Some(f) = r[4].real() {
                    floors[*si].push(f);
                }
            },
        )?;
        let data = values
            .into_iter()
            .zip(floors)
            .zip(&series)
            .map(|((mut v, mut f), s)| {
                v.sort_by_key(|x| x.0);
                let mut points: Vec<detect::Point> = Vec::new();
                for (b, vals) in v {
                    match points.last_mut() {
                        Some(p) if p.build == b => p.values.extend(vals),
                        _ => points.push(detect::Point {
                            build: b,
                            values: vals,
                        }),
                    }
                }
                points.retain(|p| !p.values.is_empty());
                detect::Series {
                    id: s.id,
                    points,
                    floor: crate::compare::median(&mut f),
                }
            })
            .collect();
        let mut hosts = HashMap::new();
        store.scan("SELECT fingerprint, description FROM hosts", &mut |r| {
            hosts.insert(r[0].text(), r[1].text());
        })?;
        Ok(History {
            builds,
            series,
            data,
            disturbed_left_out: left_out,
            hosts,
        })
    }
}

use store::Value;
