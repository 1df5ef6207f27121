//! `relbench sample`: the server host's log for a study whose steps run
//! from several client hosts. It reads the machine and the server's
//! process tree every `--every` and appends each reading to its log
//! (`metrics::server_log`) until Ctrl-C, SIGTERM, `--for`, or the end of
//! the server's process; `relbench merge --server-samples DIR` cuts each
//! step's window out of it.

use std::path::PathBuf;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use anyhow::bail;

use super::Exit;
use crate::metrics::{device, host, procfs, server_log};
use crate::runner;

pub(super) struct Options {
    pub pid: u32,
    pub datadir: Option<PathBuf>,
    pub out: PathBuf,
    pub every: Duration,
    pub stop_after: Option<Duration>,
}

pub(super) fn sample(o: &Options) -> anyhow::Result<()> {
    if procfs::read_tree(o.pid).is_none() {
        return Err(Exit::BadInput(format!(
            "--pid {}: no such process here; give the server's pid on this host (mysqld's or mariadbd's, \
             PostgreSQL's postmaster: the first line of postmaster.pid)",
            o.pid
        ))
        .into());
    }
    let devices = match &o.datadir {
        None => None,
        Some(d) => Some(
            device::devices_of(d)
                .map_err(|why| Exit::BadInput(format!("--datadir {}: {why}", d.display())))?,
        ),
    };
    let header = server_log::Header {
        pid: o.pid,
        devices: devices.clone(),
        host: host::facts(),
        every_ms: o.every.as_millis() as u64,
        ticks_per_sec: procfs::ticks_per_sec(),
    };
    let mut log = server_log::Writer::create(&o.out, &header)?;
    crate::errln!(
        "relbench: sampling pid {} and {} every {} ms into {}; Ctrl-C or SIGTERM stops",
        o.pid,
        devices
            .as_ref()
            .map_or("no datadir".to_string(), |d| d.devices.join(",")),
        header.every_ms,
        o.out.join(server_log::LOG_FILE).display()
    );
    let t0 = Instant::now();
    let mut next = t0;
    let mut n = 0u64;
    loop {
        let Some(r) = server_log::read(o.pid, devices.as_ref()) else {
            bail!("cannot read /proc/stat");
        };
        log.line(&r)?;
        n += 1;
        if r.server_cpu_secs.is_none() {
            crate::errln!("relbench: pid {} has ended; {n} readings kept", o.pid);
            return Ok(());
        }
        if runner::INTERRUPT.load(Ordering::Relaxed)
            || o.stop_after.is_some_and(|d| t0.elapsed() >= d)
        {
            crate::errln!("relbench: stopped; {n} readings kept");
            return Ok(());
        }
        // Asleep in slices, so that Ctrl-C or SIGTERM stops it within a
        // tenth of a second, and until `--for` ends if that comes first
        // (regression: `--every 30s --for 1s` ran 30 s, and took 27 s to
        // stop after SIGTERM).
        next += o.every;
        let wake = o.stop_after.map_or(next, |d| next.min(t0 + d));
        while !runner::INTERRUPT.load(Ordering::Relaxed) {
            let left = wake.saturating_duration_since(Instant::now());
            if left.is_zero() {
                break;
            }
            std::thread::sleep(left.min(Duration::from_millis(100)));
        }
    }
}
