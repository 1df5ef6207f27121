//! CSV: one row per target × step × clients × repeat, every figure a column,
//! for spreadsheets and notebooks. The relative columns are the tables'
//! ratios (the target's median over repeats ÷ its base's), so a spreadsheet
//! and the report agree; each line's own figures are in the absolute
//! columns. A figure that was not measured is an empty field, never 0.

use std::fmt::Write;

use crate::compare::{Cell, Comparison, Cost, Report};
use crate::results::{StepMetrics, StepResult};

/// Quotes a field when it holds a separator, a quote or a line break.
fn field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

fn opt<T: ToString>(v: Option<T>) -> String {
    v.map(|v| v.to_string()).unwrap_or_default()
}

/// Every comparison's lines, one after another; with several, a first
/// column names the comparison each line belongs to.
pub fn render(cs: &[Comparison]) -> String {
    let mut out = String::new();
    for (k, c) in cs.iter().enumerate() {
        let title = (cs.len() > 1).then_some(c.title.as_str());
        lines(&mut out, &c.report, title, k == 0);
    }
    out
}

fn lines(out: &mut String, r: &Report, comparison: Option<&str>, header: bool) {
    for (i, (ti, s)) in r.steps.iter().enumerate() {
        let cell = r.step_rows[i].map(|row| &r.rows[row].cells[*ti]);
        // Every column is named beside its value, so the header and the
        // rows cannot drift apart.
        let mut cols: Vec<(String, String)> = Vec::new();
        if let Some(c) = comparison {
            cols.push(("comparison".into(), c.to_string()));
        }
        cols.extend(what_ran(r, *ti, s, cell));
        cols.extend(costs(s, cell));
        cols.extend(machine(&s.metrics));
        cols.extend(judged(r, i, cell));
        cols.extend(latency_sla_and_size(s));
        if i == 0 && header {
            let head: Vec<&str> = cols.iter().map(|c| c.0.as_str()).collect();
            let _ = writeln!(out, "{}", head.join(","));
        }
        let line: Vec<String> = cols.iter().map(|c| field(&c.1)).collect();
        let _ = writeln!(out, "{}", line.join(","));
    }
}

type Cols = Vec<(String, String)>;

fn f3(v: Option<f64>) -> String {
    opt(v.map(|v| format!("{v:.3}")))
}

fn f4(v: Option<f64>) -> String {
    opt(v.map(|v| format!("{v:.4}")))
}

/// Which run, target, step and repeat, and its throughput.
fn what_ran(r: &Report, ti: usize, s: &StepResult, cell: Option<&Cell>) -> Cols {
    let t = &r.targets[ti];
    let run = &r.runs[t.run];
    let tput = s.failed.is_none().then_some(s.throughput);
    vec![
        ("run_dir".into(), run.dir.clone()),
        ("host".into(), run.host.hostname.clone()),
        ("target".into(), t.name.clone()),
        ("base".into(), r.targets[r.base_of[ti]].name.clone()),
        ("engine".into(), t.engine.clone()),
        ("repeat".into(), s.id.repeat.to_string()),
        ("seq".into(), s.id.seq.to_string()),
        ("step".into(), s.id.at.step.label()),
        ("kind".into(), s.id.at.step.kind.name().to_string()),
        (
            "group".into(),
            s.group.map(|g| g.name().to_string()).unwrap_or_default(),
        ),
        ("clients".into(), s.id.at.clients.to_string()),
        ("unit".into(), s.unit.name().to_string()),
        ("secs".into(), format!("{:.3}", s.secs)),
        ("events".into(), s.events.to_string()),
        ("failed_events".into(), s.failed_events.to_string()),
        ("errors".into(), s.errors.values().sum::<u64>().to_string()),
        ("throughput".into(), opt(tput.map(|v| format!("{v:.2}")))),
        ("relative".into(), f4(cell.and_then(|c| c.test.relative))),
    ]
}

/// Each cost per operation, and relative to the base's.
fn costs(s: &StepResult, cell: Option<&Cell>) -> Cols {
    let ok = s.failed.is_none();
    let mut cols = Vec::new();
    for c in Cost::ALL {
        let v = ok.then(|| c.of(&s.metrics)).flatten();
        cols.push((format!("{}_per_op", c.key()), f4(v)));
        let rel = cell.and_then(|x| x.hardware.costs_relative.get(&c).copied());
        cols.push((format!("{}_per_op_relative", c.key()), f4(rel)));
    }
    cols
}

/// What the machine did in the window: CPU, disks, memory, the sampler,
/// other programs.
fn machine(m: &StepMetrics) -> Cols {
    let sys = m.system.as_ref();
    let inter = m.interference.as_ref();
    let disk = m.disk.as_ref();
    vec![
        ("client_cpu_secs".into(), f3(m.client_cpu_secs)),
        ("server_cpu_secs".into(), f3(m.server_cpu_secs)),
        ("cpu_util_pct".into(), f3(sys.map(|s| s.cpu_util_pct))),
        ("iowait_pct".into(), f3(sys.map(|s| s.iowait_pct))),
        ("cs_per_sec".into(), f3(sys.map(|s| s.cs_per_sec))),
        (
            "disk_devices".into(),
            disk.map(|d| d.devices.join("+")).unwrap_or_default(),
        ),
        ("reads_per_sec".into(), f3(disk.map(|d| d.reads_per_sec))),
        (
            "read_mb_per_sec".into(),
            f3(disk.map(|d| d.read_mb_per_sec)),
        ),
        ("writes_per_sec".into(), f3(disk.map(|d| d.writes_per_sec))),
        (
            "write_mb_per_sec".into(),
            f3(disk.map(|d| d.write_mb_per_sec)),
        ),
        ("disk_util_pct".into(), f3(disk.map(|d| d.util_pct))),
        ("server_rss_peak_bytes".into(), opt(m.server_rss_peak_bytes)),
        ("client_rss_peak_bytes".into(), opt(m.client_rss_peak_bytes)),
        (
            "sampler_pct_of_core".into(),
            f4(m.sampler.as_ref().map(|c| c.pct_of_core)),
        ),
        (
            "others_share_pct".into(),
            f3(inter.and_then(|i| i.others_share_pct)),
        ),
        (
            "kernel_threads_cpu_pct".into(),
            f3(inter.and_then(|i| i.kernel_threads_cpu_pct)),
        ),
        ("steal_pct".into(), f3(inter.and_then(|i| i.steal_pct))),
        (
            "throughput_cv".into(),
            f4(inter.and_then(|i| i.throughput_cv)),
        ),
        (
            "worst_second_vs_median".into(),
            f4(inter.and_then(|i| i.worst_second_vs_median)),
        ),
        ("stalled_secs".into(), opt(inter.map(|i| i.stalls))),
        (
            "disturbed".into(),
            inter.and_then(|i| i.judge().0).unwrap_or_default(),
        ),
    ]
}

/// How the report judged the cell: its floor, p-value and test.
fn judged(r: &Report, i: usize, cell: Option<&Cell>) -> Cols {
    vec![
        (
            "noise_floor".into(),
            f4(r.step_rows[i].and_then(|row| r.rows[row].noise_floor)),
        ),
        (
            "p_value".into(),
            f4(cell
                .and_then(|c| c.test.significance.as_ref())
                .map(|x| x.p_value)),
        ),
        (
            "test".into(),
            cell.and_then(|c| c.test.significance.as_ref())
                .map(|x| match x.method {
                    crate::compare::Method::Paired => "paired",
                    crate::compare::Method::Unpaired => "unpaired",
                    crate::compare::Method::PerSecond => "per-second",
                })
                .unwrap_or_default()
                .to_string(),
        ),
    ]
}

/// Latencies, the SLA, the database's size, the phase, and why it failed.
fn latency_sla_and_size(s: &StepResult) -> Cols {
    let lat = s.latency.get("event");
    let m = &s.metrics;
    vec![
        (
            "p50_us".into(),
            opt(lat.map(|l| format!("{:.1}", l.p50_us))),
        ),
        (
            "p95_us".into(),
            opt(lat.map(|l| format!("{:.1}", l.p95_us))),
        ),
        (
            "p99_us".into(),
            opt(lat.map(|l| format!("{:.1}", l.p99_us))),
        ),
        (
            "max_us".into(),
            opt(lat.map(|l| format!("{:.1}", l.max_us))),
        ),
        (
            "sla_target_rows_per_sec".into(),
            f3(s.sla.as_ref().map(|x| x.target_rows_per_sec)),
        ),
        (
            "sla_insert_rows_per_sec".into(),
            f3(s.sla.as_ref().map(|x| x.insert_rows_per_sec)),
        ),
        (
            "sla_delete_rows_per_sec".into(),
            f3(s.sla.as_ref().map(|x| x.delete_rows_per_sec)),
        ),
        ("sla_passed".into(), opt(s.sla.as_ref().map(|x| x.passed))),
        ("db_bytes_before".into(), opt(m.db_bytes_before)),
        ("db_bytes_after".into(), opt(m.db_bytes_after)),
        (
            "db_allocated_before".into(),
            opt(m.db_size_before.map(|d| d.allocated)),
        ),
        (
            "db_allocated_after".into(),
            opt(m.db_size_after.map(|d| d.allocated)),
        ),
        (
            "db_logs_allocated_after".into(),
            opt(m.db_size_after.map(|d| d.logs_allocated)),
        ),
        ("phase".into(), s.id.at.phase.clone().unwrap_or_default()),
        (
            "server_settings".into(),
            s.server_settings.clone().unwrap_or_default(),
        ),
        ("failed".into(), s.failed.clone().unwrap_or_default()),
    ]
}

#[cfg(test)]
mod tests {
    use super::field;

    #[test]
    fn fields_with_separators_are_quoted() {
        assert_eq!(field("plain"), "plain");
        assert_eq!(field("a,b"), "\"a,b\"");
        assert_eq!(field("say \"hi\""), "\"say \"\"hi\"\"\"");
    }
}
