//! `relbench run --script FILE …`: a sysbench command line (its options as
//! sysbench spells them, `--name=value`, and the command last) turned into
//! the one-off plan that runs it: `--threads` the clients, `--time` or
//! `--events` the duration, `--warmup-time` the warm-up, `--rate` the
//! rate, every other option the script's.

use anyhow::bail;
use toml::Value;

/// The commands sysbench takes on its command line.
fn is_command(s: &str) -> bool {
    !s.starts_with('-')
}

/// The plan (without its target) of a script and its sysbench arguments.
pub(super) fn plan(file: &str, args: &[String]) -> anyhow::Result<toml::Table> {
    let mut command = "run".to_string();
    let mut options = toml::Table::new();
    let mut duration = toml::Table::new();
    // sysbench's defaults: ten seconds, no warm-up.
    duration.insert("write".into(), Value::String("10s".into()));
    duration.insert("warmup".into(), Value::String("0s".into()));
    let mut clients = 1i64;
    let mut rate = None;
    let mut iter = args.iter().peekable();
    while let Some(a) = iter.next() {
        if is_command(a) {
            if iter.peek().is_some() {
                bail!("--script: the command ({a}) comes last, after sysbench's options");
            }
            command = a.clone();
            continue;
        }
        let Some(opt) = a.strip_prefix("--") else {
            bail!("--script: {a} is not an option (sysbench's are --name=value)");
        };
        let (name, value) = match opt.split_once('=') {
            Some((n, v)) => (n.replace('-', "_"), v.to_string()),
            None => (opt.replace('-', "_"), "on".to_string()),
        };
        let int = |what: &str| -> anyhow::Result<i64> {
            match value.parse::<i64>() {
                Ok(n) if n >= 0 => Ok(n),
                _ => bail!("--script: --{what}={value} is not a whole number"),
            }
        };
        match name.as_str() {
            "threads" | "num_threads" => clients = int("threads")?.max(1),
            "time" | "max_time" => {
                let secs = int("time")?;
                if secs == 0 {
                    duration.remove("write");
                } else {
                    duration.insert("write".into(), Value::String(format!("{secs}s")));
                }
            }
            "events" | "max_requests" => {
                let n = int("events")?;
                if n > 0 {
                    duration.insert("events".into(), Value::Integer(n));
                }
            }
            "warmup_time" => {
                duration.insert(
                    "warmup".into(),
                    Value::String(format!("{}s", int("warmup-time")?)),
                );
            }
            "rate" => rate = Some(int("rate")?).filter(|&r| r > 0),
            "report_interval" | "percentile" | "histogram" | "verbosity" | "forced_shutdown" => {
                // relbench's own reports and progress: said once, not an error.
                eprintln!("relbench: --{opt} is sysbench's report; relbench writes its own (see --report-interval)");
            }
            _ => {
                options.insert(name, Value::String(value));
            }
        }
    }
    if duration.contains_key("events") {
        duration.remove("write");
    }
    let stem: String = std::path::Path::new(file)
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "script".into())
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' {
                c
            } else {
                '_'
            }
        })
        .take(64)
        .collect();
    let abs = std::path::absolute(file).unwrap_or_else(|_| file.into());
    // A bare name sysbench would find among its own scripts.
    let script = if !abs.exists() && !file.contains('/') {
        file.to_string()
    } else {
        abs.display().to_string()
    };
    let mut w = toml::Table::new();
    w.insert("name".into(), Value::String(stem.clone()));
    w.insert("script".into(), Value::String(script));
    w.insert("options".into(), Value::Table(options));
    let step = if command == "run" {
        stem
    } else {
        format!("{stem}.{command}")
    };
    let mut t = toml::Table::new();
    let mut s = toml::Table::new();
    s.insert("step".into(), Value::String(step));
    // A command's clients are the step's own (a plan's are for event()).
    s.insert(
        "clients".into(),
        Value::Array(vec![Value::Integer(clients)]),
    );
    if let Some(r) = rate {
        s.insert("rate".into(), Value::Integer(r));
    }
    t.insert("steps".into(), Value::Array(vec![Value::Table(s)]));
    t.insert(
        "clients".into(),
        Value::Array(vec![Value::Integer(clients)]),
    );
    t.insert("duration".into(), Value::Table(duration));
    t.insert("workload".into(), Value::Array(vec![Value::Table(w)]));
    Ok(t)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sysbenchs_flags_become_the_steps_clients_duration_and_the_scripts_options() {
        let args: Vec<String> = [
            "--threads=8",
            "--time=60",
            "--table-size=1000",
            "--skip-trx",
            "--warmup-time=5",
            "prepare",
        ]
        .map(String::from)
        .to_vec();
        let t = plan("/no/such/oltp_read_write.lua", &args).unwrap();
        let text = toml::to_string(&t).unwrap();
        assert!(text.contains("clients = [8]"), "{text}");
        assert!(
            text.contains("step = \"oltp_read_write.prepare\""),
            "{text}"
        );
        assert!(text.contains("write = \"60s\""), "{text}");
        assert!(text.contains("warmup = \"5s\""), "{text}");
        assert!(text.contains("table_size = \"1000\""), "{text}");
        assert!(text.contains("skip_trx = \"on\""), "{text}");
        assert!(plan("x.lua", &["run".into(), "--threads=2".into()]).is_err());
    }
}
