//! `relbench history changes` and `history ack`: the change points of
//! every series, found (`detect`), explained by the costs that moved (the
//! sentence a report's comparison writes, with the builds on either side
//! as target and base), and kept with a state: new, acknowledged or
//! ignored. A point found again keeps its state; a new point no longer
//! found is withdrawn.

use std::collections::{BTreeMap, HashMap};

use anyhow::bail;
use serde::Serialize;

use super::detect::{self, Found, Settings};
use super::import::Repeat;
use super::store::{row, Store, Writes};
use super::{History, SeriesInfo};
use crate::compare::{median, Cell, Cost, Figures, Hardware};
use crate::measure::stats::Interval;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum State {
    New,
    Acknowledged,
    Ignored,
}

impl State {
    pub fn name(self) -> &'static str {
        match self {
            State::New => "new",
            State::Acknowledged => "acknowledged",
            State::Ignored => "ignored",
        }
    }
    fn parse(s: &str) -> State {
        match s {
            "acknowledged" => State::Acknowledged,
            "ignored" => State::Ignored,
            _ => State::New,
        }
    }
}

/// A change point as printed and reported.
#[derive(Debug, Clone, Serialize)]
pub struct ChangePoint {
    pub id: i64,
    /// Index into [`History::series`].
    #[serde(skip)]
    pub series_index: usize,
    pub step: String,
    pub config: String,
    pub host: String,
    /// The last build before the change and the first after it.
    pub before: String,
    pub after: String,
    /// Indices into [`History::builds`].
    #[serde(skip)]
    pub before_place: usize,
    #[serde(skip)]
    pub after_place: usize,
    /// Median after ÷ median before.
    pub magnitude: f64,
    pub interval: Option<Interval>,
    pub p: f64,
    pub floor: Option<f64>,
    pub explanation: String,
    pub state: State,
}

impl ChangePoint {
    /// One line: what changed, by how much, where, how sure, and why.
    /// The interval of the magnitude, as every output prints it.
    pub fn interval_text(&self) -> Option<String> {
        self.interval
            .as_ref()
            .map(|i| format!("{:.3}–{:.3}", i.lo, i.hi))
    }

    pub fn line(&self) -> String {
        let iv = self
            .interval_text()
            .map(|i| format!(" ({i})"))
            .unwrap_or_default();
        format!(
            "#{} {} ×{:.3}{iv} between {} and {}, p {}: {} [{}; config {}, host {}]",
            self.id,
            self.step,
            self.magnitude,
            self.before,
            self.after,
            fmt_p(self.p),
            self.explanation,
            self.state.name(),
            self.config,
            self.host
        )
    }
}

pub fn fmt_p(p: f64) -> String {
    if p < 0.0001 {
        format!("{p:.1e}")
    } else {
        format!("{p:.4}")
    }
}

/// What one search of the history found.
#[derive(Debug, Clone, Serialize)]
pub struct Outcome {
    pub series: usize,
    pub builds: usize,
    /// Splits tested, over every series (Benjamini–Hochberg's family).
    pub tested: usize,
    /// Significant, but within their series' A/A floor.
    pub below_floor: usize,
    /// Repeats left out: another program disturbed their window.
    pub disturbed_left_out: usize,
    /// New points of an earlier search not found this time.
    pub withdrawn: usize,
    /// Every change point, in series then build order.
    pub points: Vec<ChangePoint>,
}

/// Repeats a side a change's interval and explanation are computed from.
const NEAREST: usize = 24;

fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

impl Outcome {
    /// What the search did, in one sentence (printed by `history changes`
    /// and at the top of the report).
    pub fn summary(&self, q: f64) -> String {
        let open = self.points.iter().filter(|c| c.state == State::New).count();
        let mut s = format!(
            "{} over {}: {} ({open} open); {} (Benjamini–Hochberg at {}% over all of them), {} within \
             {} A/A floor, not counted; {} left out",
            plural(self.series, "series", "series"),
            plural(self.builds, "build", "builds"),
            plural(self.points.len(), "change point", "change points"),
            plural(self.tested, "split tested", "splits tested"),
            q * 100.0,
            plural(self.below_floor, "significant one", "significant ones"),
            if self.below_floor == 1 { "its series'" } else { "their series'" },
            plural(self.disturbed_left_out, "disturbed repeat", "disturbed repeats"),
        );
        if self.withdrawn > 0 {
            s.push_str(&format!(
                "; {} of an earlier search no longer found, withdrawn",
                plural(self.withdrawn, "new point", "new points")
            ));
        }
        s
    }
}

/// Finds the change points of the whole history and records them.
pub fn find(store: &mut Store, settings: &Settings) -> anyhow::Result<(History, Outcome)> {
    let h = History::read(store)?;
    let found = detect::detect(&h.data, settings);
    let index: HashMap<i64, usize> = h
        .series
        .iter()
        .enumerate()
        .map(|(i, s)| (s.id, i))
        .collect();
    let changes: Vec<&Found> = found.iter().filter(|f| f.is_change()).collect();
    let figures = figures_of(store, &changes)?;
    let mut known: HashMap<(i64, i64), (i64, State)> = HashMap::new();
    store.scan(
        "SELECT id, series, build, state FROM changes",
        &[],
        &mut |r| {
            known.insert(
                (r[1].int().unwrap_or(0), r[2].int().unwrap_or(0)),
                (r[0].int().unwrap_or(0), State::parse(&r[3].text())),
            );
        },
    )?;
    let mut next = store.max_id("changes")? + 1;
    let mut points = Vec::new();
    let mut sql = Writes::default();
    let now = crate::util::utc_iso(crate::util::unix_now());
    let mut seen = std::collections::HashSet::new();
    for f in &changes {
        let si = index[&f.series];
        let data = &h.data[si];
        let (bp, ap) = (data.points[f.at - 1].build, data.points[f.at].build);
        let (bid, aid) = (h.builds[bp].id, h.builds[ap].id);
        // Each side's builds nearest the change, up to NEAREST repeats: the
        // explanation's tests invert the rank-sum test, whose exact counts
        // grow with the product of the sides (90 against 90 took 0.2 s each).
        let side = |builds: &mut dyn Iterator<Item = &detect::Point>| -> Cell {
            let mut vals = Vec::new();
            let mut reps: Vec<&Repeat> = Vec::new();
            for p in builds {
                if vals.len() >= NEAREST {
                    break;
                }
                vals.extend(p.values.iter().copied());
                if let Some(r) = figures.get(&(f.series, h.builds[p.build].id)) {
                    reps.extend(r.iter());
                }
            }
            vals.truncate(NEAREST);
            side_cell(vals, &reps)
        };
        let before = side(&mut data.points[f.from..f.at].iter().rev());
        let mut after = side(&mut data.points[f.at..f.to].iter());
        let explanation = crate::compare::explain_change(&mut after, &before);
        // The interval the comparison of the two sides computed.
        let interval = after.test.significance.as_ref().and_then(|s| s.interval);
        let (id, state) = match known.get(&(f.series, aid)) {
            Some(&(id, st)) => (id, st),
            None => {
                next += 1;
                (next - 1, State::New)
            }
        };
        seen.insert(id);
        sql.push(
            "INSERT INTO changes (id, series, build, before_build, magnitude, lo, hi, p, floor, explanation, state, found) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12) \
             ON CONFLICT (series, build) DO UPDATE SET before_build = excluded.before_build, magnitude = excluded.magnitude, \
             lo = excluded.lo, hi = excluded.hi, p = excluded.p, floor = excluded.floor, explanation = excluded.explanation",
            vec![
                id.into(),
                f.series.into(),
                aid.into(),
                bid.into(),
                f.magnitude.into(),
                interval.as_ref().map(|i| i.lo).into(),
                interval.as_ref().map(|i| i.hi).into(),
                f.p.into(),
                data.floor.into(),
                explanation.as_str().into(),
                state.name().into(),
                now.as_str().into(),
            ],
        );
        let s: &SeriesInfo = &h.series[si];
        points.push(ChangePoint {
            id,
            series_index: si,
            step: s.step.clone(),
            config: s.config.clone(),
            host: s.host.clone(),
            before: h.builds[bp].name.clone(),
            after: h.builds[ap].name.clone(),
            before_place: bp,
            after_place: ap,
            magnitude: f.magnitude,
            interval,
            p: f.p,
            floor: data.floor,
            explanation,
            state,
        });
    }
    let withdrawn: Vec<i64> = known
        .values()
        .filter(|(id, st)| *st == State::New && !seen.contains(id))
        .map(|(id, _)| *id)
        .collect();
    for id in &withdrawn {
        sql.push("DELETE FROM changes WHERE id = $1", vec![(*id).into()]);
    }
    if !sql.is_empty() {
        store.write(&sql)?;
    }
    let outcome = Outcome {
        series: h.series.len(),
        builds: h.builds.len(),
        tested: found.len(),
        below_floor: found
            .iter()
            .filter(|f| f.significant && f.below_floor)
            .count(),
        disturbed_left_out: h.disturbed_left_out,
        withdrawn: withdrawn.len(),
        points,
    };
    Ok((h, outcome))
}

/// Each repeat's figures of the series that changed, by (series, build id),
/// quiet repeats only.
fn figures_of(
    store: &mut Store,
    changes: &[&Found],
) -> anyhow::Result<HashMap<(i64, i64), Vec<Repeat>>> {
    let mut ids: Vec<i64> = changes.iter().map(|f| f.series).collect();
    ids.sort_unstable();
    ids.dedup();
    let mut out: HashMap<(i64, i64), Vec<Repeat>> = HashMap::new();
    for chunk in ids.chunks(500) {
        store.scan(
            &format!(
                "SELECT c.series, c.build, c.disturbed, f.repeats FROM cells c JOIN figures f \
                 ON f.run = c.run AND f.target = c.target AND f.series = c.series WHERE c.series IN {}",
                row(1, chunk.len())
            ),
            &chunk.iter().map(|&i| i.into()).collect::<Vec<_>>(),
            &mut |r| {
                let reps: Vec<Repeat> = serde_json::from_str(&r[3].text()).unwrap_or_default();
                let d = r[2].text();
                let quiet = reps
                    .into_iter()
                    .zip(d.bytes().chain(std::iter::repeat(b'0')))
                    .filter(|(_, d)| *d != b'1')
                    .map(|(r, _)| r);
                out.entry((r[0].int().unwrap_or(0), r[1].int().unwrap_or(0)))
                    .or_default()
                    .extend(quiet);
            },
        )?;
    }
    Ok(out)
}

/// The figures of one side of a change, as a report's cell holds a
/// target's: medians over its repeats, each cost's samples for its test.
fn side_cell(values: Vec<f64>, reps: &[&Repeat]) -> Cell {
    // Builds measured in different runs: no rounds to pair them by, so
    // each repeat is numbered by itself (`verdicts::sample` pairs only
    // cells that carry rounds).
    let mut cost_samples: BTreeMap<Cost, Vec<(u32, f64)>> = BTreeMap::new();
    for (i, r) in reps.iter().enumerate() {
        for (k, v) in &r.costs {
            if let Some(c) = Cost::ALL.iter().find(|c| c.key() == k) {
                cost_samples.entry(*c).or_default().push((i as u32, *v));
            }
        }
    }
    let med = |f: fn(&Repeat) -> Option<f64>| {
        median(&mut reps.iter().filter_map(|r| f(r)).collect::<Vec<f64>>())
    };
    Cell {
        figures: Figures {
            throughput: median(&mut values.clone()),
            repeats: values.len(),
            throughputs: values,
            p99_us: med(|r| r.p99_us),
            ..Default::default()
        },
        hardware: Hardware {
            costs: crate::compare::cost_medians(&cost_samples),
            cost_samples,
            cpu_util_pct: med(|r| r.cpu_pct),
            own_cpu_pct: med(|r| r.own_cpu_pct),
            usable_cores: med(|r| r.cores),
            disk_util_pct: med(|r| r.disk_pct),
            ..Default::default()
        },
        ..Cell::default()
    }
}

/// Sets the state of change points by id.
pub fn ack(store: &mut Store, ids: &[i64], state: State) -> anyhow::Result<()> {
    let mut have = std::collections::HashSet::new();
    store.scan("SELECT id FROM changes", &[], &mut |r| {
        have.insert(r[0].int().unwrap_or(0));
    })?;
    if let Some(missing) = ids.iter().find(|i| !have.contains(i)) {
        bail!(
            "the history in {} has no change point #{missing}; `relbench history changes` lists them",
            store.at
        );
    }
    let mut sql = Writes::default();
    for &id in ids {
        sql.push(
            "UPDATE changes SET state = $1 WHERE id = $2",
            vec![state.name().into(), id.into()],
        );
    }
    store.write(&sql)
}
