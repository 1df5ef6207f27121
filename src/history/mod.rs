//! A study's history: every run kept in a database (`store`), read in as
//! series of builds (`import`: `relbench history add`), change points
//! found in them (`detect`, judged on every repeat, disturbed windows left
//! out, the A/A floor respected) and explained by the costs that moved
//! (`changes`: `history changes`, `history ack`), laid out over builds
//! (`report`), a culprit found among ordered builds by measuring them
//! (`bisect`), and one build judged for `git bisect run`
//! (`bisect_check`).

pub mod bisect;
pub mod bisect_check;
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
    /// Per series (as `series`), the builds measured whose every repeat
    /// was left out: drawn as such, never silently missing.
    pub all_left_out: Vec<Vec<usize>>,
    pub hosts: HashMap<String, String>,
}

impl History {
    pub fn read(store: &mut Store) -> anyhow::Result<History> {
        let builds = read_builds(store)?;
        let series = read_series(store)?;
        // Ids are small and dense (relbench numbers them): looked up by
        // position, not hashed, two million times.
        let index = dense(&mut series.iter().enumerate().map(|(i, s)| (s.id, i)));
        let place = dense(&mut builds.iter().enumerate().map(|(i, b)| (b.id, i)));
        let Cells {
            values,
            floors,
            left_out,
            left,
        } = read_cells(store, &index, &place, series.len())?;
        let all_left_out = all_left_out(&values, left);
        let data = series_of(values, floors, &series);
        let mut hosts = HashMap::new();
        store.scan(
            "SELECT fingerprint, description FROM hosts",
            &[],
            &mut |r| {
                hosts.insert(r[0].text(), r[1].text());
            },
        )?;
        Ok(History {
            builds,
            series,
            data,
            disturbed_left_out: left_out,
            all_left_out,
            hosts,
        })
    }
}

/// The builds, in their order.
fn read_builds(store: &mut Store) -> anyhow::Result<Vec<Build>> {
    let mut builds = Vec::new();
    store.scan("SELECT id, name, version, ord FROM builds", &[], &mut |r| {
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
    Ok(builds)
}

fn read_series(store: &mut Store) -> anyhow::Result<Vec<SeriesInfo>> {
    let mut series = Vec::new();
    store.scan(
        "SELECT id, step, config, config_text, host, grp, unit FROM series ORDER BY id",
        &[],
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
    Ok(series)
}

/// Ids as positions: `v[id]` is the index of the row with that id.
fn dense(ids: &mut dyn Iterator<Item = (i64, usize)>) -> Vec<Option<usize>> {
    let mut v: Vec<Option<usize>> = Vec::new();
    for (id, i) in ids {
        let id = usize::try_from(id).unwrap_or(0);
        if id >= v.len() {
            v.resize(id + 1, None);
        }
        v[id] = Some(i);
    }
    v
}

/// Every cell of the history: per series, each quiet repeat with its
/// build's place, and the floors seen; the repeats left out.
struct Cells {
    values: Vec<Vec<(usize, f64)>>,
    floors: Vec<Vec<f64>>,
    left_out: usize,
    /// (series, build) of each repeat left out.
    left: Vec<(u32, u32)>,
}

/// Reads every cell, on as many threads as the machine has. Flat, and
/// nothing allocated per cell: `history changes` reads every cell of the
/// history (2 million for 10,000 series of 200 builds).
fn read_cells(
    store: &mut Store,
    index: &[Option<usize>],
    place: &[Option<usize>],
    nseries: usize,
) -> anyhow::Result<Cells> {
    let at =
        |v: &[Option<usize>], id: Option<i64>| v.get(usize::try_from(id?).ok()?).copied().flatten();
    struct Part {
        values: Vec<(u32, u32, f64)>,
        floors: Vec<(u32, f64)>,
        left_out: usize,
        /// (series, build) of each repeat left out.
        left: Vec<(u32, u32)>,
    }
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let parts: Vec<std::sync::Mutex<Part>> = (0..threads)
        .map(|_| {
            std::sync::Mutex::new(Part {
                values: Vec::new(),
                floors: Vec::new(),
                left_out: 0,
                left: Vec::new(),
            })
        })
        .collect();
    store.scan_parts(
        "cells",
        "SELECT series, build, throughputs, disturbed, floor FROM cells WHERE {part}",
        threads,
        &|k, r| {
            let (Some(si), Some(bi)) = (at(index, r[0].int()), at(place, r[1].int())) else {
                return;
            };
            let (Value::Text(t), Value::Text(d)) = (r[2], r[3]) else {
                return;
            };
            let mut part = parts[k].lock().expect("a reader panicked");
            let d = d.as_bytes();
            for (i, v) in t.split(' ').enumerate() {
                if d.get(i) == Some(&b'1') {
                    part.left_out += 1;
                    part.left.push((si as u32, bi as u32));
                } else if let Ok(v) = v.parse::<f64>() {
                    part.values.push((si as u32, bi as u32, v));
                }
            }
            if let Some(f) = r[4].real() {
                part.floors.push((si as u32, f));
            }
        },
    )?;
    let mut values: Vec<Vec<(usize, f64)>> = vec![Vec::new(); nseries];
    let mut floors: Vec<Vec<f64>> = vec![Vec::new(); nseries];
    let mut left_out = 0;
    let mut left: Vec<(u32, u32)> = Vec::new();
    // Pieces in rowid order, so each series' repeats keep the order
    // they were added in.
    for p in parts {
        let p = p.into_inner().expect("a reader panicked");
        left_out += p.left_out;
        left.extend(p.left);
        for (si, bi, v) in p.values {
            values[si as usize].push((bi as usize, v));
        }
        for (si, f) in p.floors {
            floors[si as usize].push(f);
        }
    }
    Ok(Cells {
        values,
        floors,
        left_out,
        left,
    })
}

/// Per series, the builds measured whose every repeat was left out.
fn all_left_out(values: &[Vec<(usize, f64)>], mut left: Vec<(u32, u32)>) -> Vec<Vec<usize>> {
    let mut all_left_out: Vec<Vec<usize>> = vec![Vec::new(); values.len()];
    left.sort_unstable();
    left.dedup();
    for (si, bi) in left {
        let (si, bi) = (si as usize, bi as usize);
        if !values[si].iter().any(|(b, _)| *b == bi) {
            all_left_out[si].push(bi);
        }
    }
    all_left_out
}

/// Each series' repeats grouped by build, in build order, with the median
/// of its runs' floors.
fn series_of(
    values: Vec<Vec<(usize, f64)>>,
    floors: Vec<Vec<f64>>,
    series: &[SeriesInfo],
) -> Vec<detect::Series> {
    values
        .into_iter()
        .zip(floors)
        .zip(series)
        .map(|((mut v, mut f), s)| {
            // Stable: repeats keep their order within a build. (Cells
            // are mostly added in build order already.)
            if !v.windows(2).all(|w| w[0].0 <= w[1].0) {
                v.sort_by_key(|x| x.0);
            }
            let mut points: Vec<detect::Point> = Vec::new();
            for (b, x) in v {
                match points.last_mut() {
                    Some(p) if p.build == b => p.values.push(x),
                    _ => points.push(detect::Point {
                        build: b,
                        values: vec![x],
                    }),
                }
            }
            detect::Series {
                id: s.id,
                points,
                floor: crate::compare::median(&mut f),
            }
        })
        .collect()
}

use store::Value;
