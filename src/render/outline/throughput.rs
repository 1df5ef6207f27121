//! Throughput tables: relative to the base (with intervals and
//! significance) and absolute.

use super::*;

/// Target ÷ base throughput for every target but the base.
pub fn relative(r: &Report) -> Section {
    let others = others(r);
    let levels = interval_levels(
        r.rows
            .iter()
            .flat_map(|row| others.iter().map(|&i| &row.cells[i])),
        true,
    );
    let mut intro = format!(
        "Target ÷ base ({}): above 1 is faster. Each cell is changed, the same or undecided: \
         changed (red at ≤ 0.95, green at ≥ 1.05) when it is past 5% and its interval is clear of 1; \
         the same (plain) when the interval of two one-sided tests at 5% (90%, the interval a same \
         cell shows) lies inside 0.95–1.05 (or inside the A/A spread, where that is wider); \
         undecided (~) otherwise, and the summary says what would decide it. \
         No cell is the same by its ratio alone.",
        r.base
    );
    let cells = || {
        r.rows
            .iter()
            .flat_map(|row| others.iter().map(move |&i| &row.cells[i]))
    };
    let uses = |m: Method| cells().any(|c| c.test.method() == Some(m));
    let repeated = uses(Method::Paired) || uses(Method::Unpaired);
    if repeated {
        intro += &format!(
            " With repeats: the ratio and its interval ({}) come from {}.",
            levels.as_deref().unwrap_or("95%"),
            Method::Paired.describe()
        );
    }
    if uses(Method::Unpaired) {
        intro += &format!(" Cells marked ᵘ: {}.", Method::Unpaired.describe());
    }
    if r.adaptive.is_some() && repeated {
        intro += " This run added repeats where a cell was undecided (`repeats = \"auto\"`): each \
                   cell's interval is at the level its last look spends (2.5% of the 5% at the first \
                   look, the rest shared by the looks repeats add), its p-value adjusted to match.";
    }
    if uses(Method::PerSecond) {
        intro += &format!(
            " With one repeat on a side: the interval (95%) and p-value come from the two windows' \
             seconds ({}).",
            Method::PerSecond.describe()
        );
    }
    if uses(Method::PerSecond) && repeated {
        intro +=
            " Cells marked ˢ use the per-second test (a target or its base has one repeat there).";
    }
    if cells().any(|c| c.test.relative.is_some() && c.test.significance.is_none()) {
        intro += " Ratios with one repeat on a side are not tested unless the plan's A/A copies \
                   measured how far windows of the same work lie apart (`copies = 2` on a target, \
                   three quiet pairs or more, windows of five whole seconds); with repeats they are.";
    }
    if r.rows.iter().any(|row| row.noise_floor.is_some()) {
        intro +=
            " A/A: the spread between identical runs of one target (its `copies`) on each step; \
                   where it is wider than 5% it is the band a cell is judged by.";
    }
    let hosts = r.rows.iter().any(|row| row.host_floor.is_some());
    if hosts {
        intro += " Hosts: the spread of the base measured on each host (each shard of a merged run) \
                   on each step, largest ÷ smallest less 1; every ratio is against its own host's base, \
                   so a difference between targets of different hosts within it may be the hosts'.";
    }
    if r.rows.iter().any(|row| row.noise_floor_disturbed) {
        intro += " A/A \"disturbed\": too few of the copies' windows were quiet for a floor \
                   (a disturbed copy measures the other program).";
    }
    if cells().any(|c| c.judgement.disturbed.is_some() || c.judgement.base_disturbed) {
        intro += &format!(
            " Disturbed: other programs or steal took {:.0}% of the machine or more while the step ran \
             here or on the base; the ratio is shown but not judged (see Interference).",
            crate::metrics::interference::DISTURBED_SHARE_PCT
        );
    }
    let mixed = uses(Method::PerSecond) && repeated;
    let noise = r
        .rows
        .iter()
        .any(|row| row.noise_floor.is_some() || row.noise_floor_disturbed);
    Section {
        title: "Relative throughput".into(),
        intro,
        groups: groups_of(r, |r, g| {
            let rows: Vec<Vec<Text>> = r
                .rows_in(g)
                .map(|row| {
                    let mut cells = vec![
                        Text::plain(row.title()),
                        Text::plain(row.id.clients.to_string()),
                    ];
                    if noise {
                        cells.push(Text::plain(match row.noise_floor {
                            Some(f) => format!("±{:.1}%", f * 100.0),
                            None if row.noise_floor_disturbed => "disturbed".into(),
                            None => "—".into(),
                        }));
                    }
                    if hosts {
                        cells.push(Text::plain(match row.host_floor {
                            Some(f) => format!("±{:.1}%", f * 100.0),
                            None => "—".into(),
                        }));
                    }
                    cells.extend(others.iter().map(|&i| {
                        let c = &row.cells[i];
                        let mut t = relative_cell(c);
                        if !c.internals.plans_differ.is_empty() {
                            t.text.push_str(" · plan differs");
                        }
                        if mixed && c.test.method() == Some(Method::PerSecond) {
                            t.text.push_str(" ˢ");
                        }
                        if c.test.method() == Some(Method::Unpaired) {
                            t.text.push_str(" ᵘ");
                        }
                        t
                    }));
                    cells
                })
                .collect();
            let mut labels = vec!["step", "clients"];
            if noise {
                labels.push("A/A noise");
            }
            if hosts {
                labels.push("hosts");
            }
            let (head, groups) = target_head(r, &labels, &others);
            (!rows.is_empty()).then_some(Table {
                head,
                groups,
                text_columns: 1,
                rows,
            })
        }),
    }
}

/// Throughput of every target, base first.
pub fn absolute(r: &Report) -> Section {
    let cols = r.columns();
    let mut intro =
        "Operations per second (rows per second for load and scan), median over repeats."
            .to_string();
    if let Some(levels) = interval_levels(r.rows.iter().flat_map(|row| row.cells.iter()), false) {
        intro += &format!(
            " In brackets: the median's confidence interval over the repeats ({levels}; order statistics)."
        );
    }
    Section {
        title: "Absolute throughput".into(),
        intro,
        groups: groups_of(r, |r, g| {
            let rows: Vec<Vec<Text>> = r
                .rows_in(g)
                .map(|row| {
                    let mut cells = vec![
                        Text::plain(row.title()),
                        Text::plain(row.id.clients.to_string()),
                        Text::plain(row.unit.name()),
                    ];
                    cells.extend(cols.iter().map(|&i| {
                        let c = &row.cells[i];
                        let text = match (c.figures.throughput, &c.figures.throughput_interval) {
                            (Some(t), Some(ci)) => Text::plain(format!(
                                "{} ({}–{})",
                                fmt_throughput(t),
                                fmt_throughput(ci.lo),
                                fmt_throughput(ci.hi)
                            )),
                            (Some(t), None) => Text::plain(fmt_throughput(t)),
                            (None, _) => missing(c),
                        };
                        match (c.judgement.sla_missed, c.judgement.rate_missed) {
                            (Some(_), _) => Text {
                                text: format!("{} (SLA missed)", text.text),
                                tone: Some(Verdict::Undecided),
                            },
                            (None, Some(_)) => Text {
                                text: format!("{} (rate missed)", text.text),
                                tone: Some(Verdict::Undecided),
                            },
                            (None, None) => text,
                        }
                    }));
                    cells
                })
                .collect();
            let (head, groups) = target_head(r, &["step", "clients", "unit"], &cols);
            (!rows.is_empty()).then_some(Table {
                head,
                groups,
                text_columns: 1,
                rows,
            })
        }),
    }
}
