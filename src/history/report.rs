//! `relbench history report`'s model: the history over builds, computed
//! once from the history and the search's outcome (`HistoryReport`);
//! `render::history` lays it out as Markdown, HTML with an SVG chart per
//! series, and JSON.

use serde::Serialize;

use super::changes::{ChangePoint, Outcome, State};
use super::detect::Settings;
use super::History;
use crate::compare::median;

#[derive(Debug, Clone, Serialize)]
pub struct HistoryReport {
    /// Builds in order.
    pub builds: Vec<String>,
    pub groups: Vec<Group>,
    /// Change points found now that nobody acknowledged or ignored.
    pub open: Vec<ChangePoint>,
    /// What the search did (`Outcome::summary`).
    pub summary: String,
    pub outcome: Outcome,
}

/// The series of one workload group on one configuration and host.
#[derive(Debug, Clone, Serialize)]
pub struct Group {
    pub title: String,
    pub config: String,
    pub host: String,
    pub lines: Vec<Line>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Line {
    pub step: String,
    pub unit: String,
    /// Median throughput of each build's quiet repeats (`None`: not
    /// measured there), in build order.
    pub medians: Vec<Option<f64>>,
    pub floor: Option<f64>,
    /// Change points: (index of the first build after, magnitude, id, state).
    pub changes: Vec<(usize, f64, i64, State)>,
    /// Builds measured whose every repeat was left out (disturbed,
    /// stalled or too short to judge): marked, not silently missing.
    pub all_left_out: Vec<usize>,
}

pub fn model(h: &History, o: &Outcome) -> HistoryReport {
    let mut groups: Vec<Group> = Vec::new();
    for (si, s) in h.series.iter().enumerate() {
        let data = &h.data[si];
        let mut medians = vec![None; h.builds.len()];
        for p in &data.points {
            medians[p.build] = median(&mut p.values.clone());
        }
        let line = Line {
            step: s.step.clone(),
            unit: s.unit.clone(),
            medians,
            floor: data.floor,
            all_left_out: h.all_left_out.get(si).cloned().unwrap_or_default(),
            changes: o
                .points
                .iter()
                .filter(|c| c.series_index == si)
                .map(|c| (c.after_place, c.magnitude, c.id, c.state))
                .collect(),
        };
        let title = format!(
            "{} · config {} · host {}",
            if s.group.is_empty() {
                "steps"
            } else {
                &s.group
            },
            s.config,
            s.host
        );
        match groups.iter_mut().find(|g| g.title == title) {
            Some(g) => g.lines.push(line),
            None => groups.push(Group {
                title,
                config: s.config_text.clone(),
                host: h.hosts.get(&s.host).cloned().unwrap_or_default(),
                lines: vec![line],
            }),
        }
    }
    HistoryReport {
        builds: h.builds.iter().map(|b| b.name.clone()).collect(),
        groups,
        open: o
            .points
            .iter()
            .filter(|c| c.state == State::New)
            .cloned()
            .collect(),
        summary: o.summary(Settings::default().q),
        outcome: Outcome {
            points: Vec::new(),
            ..o.clone()
        },
    }
}
