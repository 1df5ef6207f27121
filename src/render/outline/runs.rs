//! What the runs were: failed steps, run and target details, settings
//! that differ, and what else used the machine.

use super::*;

/// Steps with errors or failures, with the first message of each kind.
pub fn problems(r: &Report) -> Option<Table> {
    let rows: Vec<Vec<Text>> = r
        .problems
        .iter()
        .map(|x| {
            vec![
                Text::plain(r.targets[x.target].name.clone()),
                Text::plain(x.step.clone()),
                Text::plain(x.clients.to_string()),
                Text::plain(x.repeat.to_string()),
                Text::plain(x.what.clone()),
                Text::plain(x.count.map_or_else(|| "—".into(), |n| n.to_string())),
                Text::plain(x.message.clone()),
            ]
        })
        .collect();
    (!rows.is_empty()).then(|| {
        Table::new(
            [
                "target",
                "step",
                "clients",
                "repeat",
                "class/kind",
                "count",
                "first message",
            ],
            7,
            rows,
        )
    })
}

pub(super) fn run_details(run: &RunMeta) -> Block {
    let h = &run.host;
    let tuning = h.tuning.iter().map(|(k, v)| (k.clone(), v.clone()));
    Block::Details {
        summary: format!(
            "{}: host {}, started {}, {:?}",
            run.dir, h.hostname, run.started, run.status
        ),
        facts: vec![
            ("CPU".into(), format!("{}, {} cores", h.cpu_model, h.cores)),
            ("memory".into(), fmt_bytes(h.memory_bytes)),
            (
                "kernel".into(),
                if h.os.is_empty() {
                    format!("Linux {}", h.kernel)
                } else {
                    format!("Linux {} ({})", h.kernel, h.os)
                },
            ),
        ]
        .into_iter()
        .chain(tuning)
        .chain([
            ("relbench".into(), run.relbench_version.clone()),
            ("sampler".into(), run.sampler_cost.clone()),
            ("plan".into(), run.plan_source.clone()),
        ])
        .collect(),
        text: Some(run.plan_text.clone()),
    }
}

pub(super) fn target_details(t: &TargetMeta) -> Block {
    let mut facts: Vec<(String, String)> = t
        .config
        .iter()
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    facts.push((
        "data on".into(),
        t.filesystem
            .clone()
            .unwrap_or_else(|| "not recorded".into()),
    ));
    if let Some(tr) = &t.transport {
        facts.push(("clients connect by".into(), tr.clone()));
    }
    Block::Details {
        summary: format!("{}: {} {} on {}", t.name, t.engine, t.version, t.host),
        facts,
        text: None,
    }
}

/// A setting's value in a table: an empty one said as empty, not left a
/// blank cell that reads as "not read".
fn shown(v: &str) -> String {
    if v.is_empty() {
        "(empty)".into()
    } else {
        v.to_string()
    }
}

/// Server settings, as read back from each server, that differ from its
/// base's.
pub(super) fn settings(doc: &mut Vec<Block>, r: &Report) {
    let rows_out: Vec<Vec<Text>> = r
        .targets
        .iter()
        .enumerate()
        .flat_map(|(ti, t)| {
            t.settings_differ.iter().map(move |(k, v, b)| {
                vec![
                    Text::plain(t.name.clone()),
                    Text::plain(r.targets[r.base_of[ti]].name.clone()),
                    Text::plain(k.clone()),
                    Text::plain(shown(v)),
                    Text::plain(shown(b)),
                ]
            })
        })
        .collect();
    if rows_out.is_empty() {
        return;
    }
    doc.push(Block::Heading(
        2,
        "Settings that differ from the base".into(),
    ));
    doc.push(Block::Paragraph(
        "The server's effective settings as relbench read them back at the start of the target (not the config \
         file's text), where a target's differ from its base's."
            .into(),
    ));
    doc.push(Block::Table(Table::new(
        ["target", "base", "setting", "target's", "base's"],
        5,
        rows_out,
    )));
}

pub(super) fn interference(doc: &mut Vec<Block>, r: &Report) {
    use crate::metrics::interference::{DISTURBED_SHARE_PCT, DISTURBED_STEAL_PCT};
    if r.interference.is_empty() {
        return;
    }
    doc.push(Block::Heading(2, "Interference".into()));
    let disturbed = r
        .interference
        .iter()
        .filter(|x| x.disturbed.is_some())
        .count();
    let judged = r
        .interference
        .iter()
        .filter(|x| x.not_judged.is_none())
        .count();
    doc.push(Block::Paragraph(format!(
        "What else used the machine while each step ran: other programs' CPU (the machine's busy time less \
         interrupts, the server's processes, relbench and kernel threads) as a share of all its CPUs, steal, \
         and how steady the step's throughput was second to second (coefficient of variation, the slowest \
         whole second ÷ the median one, seconds with nothing done). A window is disturbed at {DISTURBED_SHARE_PCT:.0}% \
         of the machine to other programs or {DISTURBED_STEAL_PCT:.0}% to steal: a CPU-bound step can lose about \
         that much throughput, as much as the report's 5% threshold; steal's threshold is higher because a VM's \
         own IO shows as steal. CPU is counted in 10 ms ticks, so a short window must pass the threshold by \
         2% ÷ its length in seconds. {disturbed} of {judged} judged windows were disturbed. Listed: \
         windows where other programs or steal reached 1%, or a second with nothing done.{}",
        match &r.retried {
            x if x.windows == 0 => String::new(),
            x => format!(
                " {} disturbed window(s) of {} step(s) were measured again at once ({:.0} s in all); {} of those \
                 steps ended on a quiet window.",
                x.windows, x.steps, x.secs, x.settled
            ),
        }
    )));
    let pct =
        |v: Option<f64>| Text::plain(v.map_or_else(|| NOT_MEASURED.into(), |v| format!("{v:.1}%")));
    let rows: Vec<Vec<Text>> = r
        .interference
        .iter()
        .filter(|x| {
            x.disturbed.is_some()
                || x.others_share_pct.unwrap_or(0.0) >= 1.0
                || x.steal_pct.unwrap_or(0.0) >= 1.0
                || x.stalls > 0
        })
        .map(|x| {
            vec![
                Text::plain(x.step.clone()),
                Text::plain(x.clients.to_string()),
                Text::plain(r.targets[x.target].name.clone()),
                Text::plain(x.repeat.to_string()),
                pct(x.others_share_pct),
                pct(x.steal_pct),
                Text::plain(
                    x.throughput_cv
                        .map_or_else(|| "—".into(), |v| format!("{v:.3}")),
                ),
                Text::plain(
                    x.worst_second_vs_median
                        .map_or_else(|| "—".into(), |v| format!("{v:.2}")),
                ),
                Text::plain(x.stalls.to_string()),
                match &x.disturbed {
                    Some(why) => Text {
                        text: why.clone(),
                        tone: Some(Verdict::Disturbed),
                    },
                    None => Text::plain(x.top.join(", ")),
                },
            ]
        })
        .collect();
    if rows.is_empty() {
        return;
    }
    doc.push(Block::Table(Table::new(
        [
            "step",
            "clients",
            "target",
            "repeat",
            "other programs",
            "steal",
            "throughput CV",
            "worst s ÷ median",
            "stalled s",
            "disturbed by / seen",
        ],
        4,
        rows,
    )));
}
