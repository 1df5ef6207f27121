//! The `restart` step: stop a managed server cleanly and start it again on
//! the same datadir, under the settings of the phase it begins. It swaps
//! the target's driver (a new start has a new port, password and process),
//! so it runs beside [`super::step::measure_step`], not inside it: the
//! machine is sampled over both halves, and the result times each.

use std::time::Instant;

use super::events::{Event, Sinks};
use super::probe_of;
use super::step::{blank_result, record_sizes};
use crate::db::{self, Dirs, Target};
use crate::metrics::costs::{self, Scope};
use crate::metrics::{Probe, Sampler};
use crate::plan::schedule::Execution;
use crate::results::StepResult;

/// Restarts `driver`'s server as `spec` says. A server that does not come
/// back leaves `driver` stopped and the result failed with why (its log's
/// end); the caller stops sending the target work.
pub(super) fn restart(
    driver: &mut Box<dyn Target>,
    dirs: &Dirs,
    e: &Execution,
    sinks: &mut Sinks,
) -> anyhow::Result<StepResult> {
    let spec = &e.settings;
    let label = e.label();
    let mut r = blank_result(e);
    let size_before = driver.data_size();
    // The server's processes change under the sampler: it reads the
    // machine and the devices, and the server's CPU is in the machine's.
    let probe = Probe {
        devices: probe_of(driver.as_ref()).devices,
        server_pid: None,
        server_elsewhere_here: false,
    };
    sinks.tell(&Event::StepStarted {
        id: &e.id,
        label: &label,
        total: None,
    });
    let t0 = Instant::now();
    let sampler = Sampler::start(probe.clone(), t0);
    let stopped = driver.cleanup(false);
    let mut start = None;
    let shutdown = t0.elapsed().as_secs_f64();
    r.notes
        .insert("shutdown_secs".into(), format!("{shutdown:.3}"));
    match stopped {
        Err(err) => r.failed = Some(format!("stopping the server: {err:#}")),
        Ok(()) => {
            let t1 = Instant::now();
            match db::open(spec, dirs, &mut |line| sinks.line(line)) {
                Ok(d) => {
                    *driver = d;
                    start = Some(t1.elapsed().as_secs_f64());
                    r.notes.insert(
                        "start_secs".into(),
                        format!("{:.3}", t1.elapsed().as_secs_f64()),
                    );
                }
                Err(err) => {
                    r.failed = Some(format!("the server did not come back: {err:#}"));
                }
            }
        }
    }
    r.secs = t0.elapsed().as_secs_f64();
    if let Some(s) = &e.server_settings {
        r.notes.insert("settings".into(), s.clone());
    }
    let sampled = sampler.finish();
    let scope = Scope {
        here: true,
        embedded: false,
    };
    let (metrics, notes) = costs::measure(&sampled, None, scope, &probe.devices);
    r.metrics = metrics;
    r.notes
        .extend(notes.into_iter().map(|(k, v)| (k.to_string(), v)));
    record_sizes(&mut r, size_before, driver.data_size());
    let line = match &r.failed {
        Some(f) => format!("{label}: FAILED: {f}"),
        None => format!(
            "{label}: {:.1} s (shutdown {shutdown:.1} s, start {:.1} s)",
            r.secs,
            start.unwrap_or_default()
        ),
    };
    sinks.tell(&Event::StepEnded {
        id: &e.id,
        line: &line,
        failed: r.failed.is_some(),
    });
    Ok(r)
}
