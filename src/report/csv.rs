//! CSV: one row per target × step × clients × repeat, every figure a column,
//! for spreadsheets and notebooks. Relative columns divide by the base's
//! median for the same step and client count.

use std::fmt::Write;

use super::{ratio, Report};

const HEAD: &[&str] = &[
    "run_dir",
    "host",
    "target",
    "engine",
    "repeat",
    "seq",
    "step",
    "kind",
    "group",
    "clients",
    "unit",
    "secs",
    "events",
    "failed_events",
    "errors",
    "throughput",
    "relative",
    "cpu_us_per_op",
    "cpu_relative",
    "p50_us",
    "p95_us",
    "p99_us",
    "max_us",
    "db_bytes_before",
    "db_bytes_after",
    "failed",
];

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

pub fn render(r: &Report) -> String {
    let mut out = HEAD.join(",");
    out.push('\n');
    let base = r.base_index();
    for (ti, s) in &r.steps {
        let t = &r.targets[*ti];
        let run = &r.runs[t.run];
        let row = r
            .rows
            .iter()
            .find(|row| row.step == s.step && row.clients == s.clients);
        let base_cell = row.map(|row| &row.cells[base]);
        let ok = s.failed.is_none();
        let tput = ok.then_some(s.throughput);
        let cpu = s.metrics.cpu_us_per_op;
        let lat = s.latency.get("event");
        let kind = format!("{:?}", s.kind).to_lowercase();
        let fields = [
            run.dir.clone(),
            run.host.hostname.clone(),
            t.name.clone(),
            t.engine.clone(),
            s.repeat.to_string(),
            s.seq.to_string(),
            s.step.clone(),
            kind,
            s.group.map(|g| g.name().to_string()).unwrap_or_default(),
            s.clients.to_string(),
            s.unit.name().to_string(),
            format!("{:.3}", s.secs),
            s.events.to_string(),
            s.failed_events.to_string(),
            s.errors.values().sum::<u64>().to_string(),
            opt(tput.map(|v| format!("{v:.2}"))),
            opt(ratio(tput, base_cell.and_then(|c| c.throughput)).map(|v| format!("{v:.4}"))),
            opt(cpu.map(|v| format!("{v:.3}"))),
            opt(ratio(cpu, base_cell.and_then(|c| c.cpu_us_per_op)).map(|v| format!("{v:.4}"))),
            opt(s.metrics.process_cpu_us_per_op.map(|v| format!("{v:.3}"))),
            opt(s.metrics.server_cpu_us_per_op.map(|v| format!("{v:.3}"))),
            opt(lat.map(|l| format!("{:.1}", l.p50_us))),
            opt(lat.map(|l| format!("{:.1}", l.p95_us))),
            opt(lat.map(|l| format!("{:.1}", l.p99_us))),
            opt(lat.map(|l| format!("{:.1}", l.max_us))),
            opt(s.metrics.db_bytes_before),
            opt(s.metrics.db_bytes_after),
            s.failed.clone().unwrap_or_default(),
        ];
        let line: Vec<String> = fields.iter().map(|f| field(f)).collect();
        let _ = writeln!(out, "{}", line.join(","));
    }
    out
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
