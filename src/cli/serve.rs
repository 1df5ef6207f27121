//! `relbench serve`: one managed target's server, started as a run would
//! start it, kept until stdin closes or Ctrl-C (for poking at it by hand, or
//! for running another tool against it, as `bench/` does).

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use anyhow::bail;

use crate::db::server;
use crate::db::spec::Access;
use crate::db::{server_spec, Dirs};
use crate::runner::{self, RunOptions};

/// Starts one target's managed server as a run would, says where it
/// listens, and keeps it until stdin closes or Ctrl-C; then stops it
/// cleanly. The datadir is kept.
pub fn serve(opts: &RunOptions, name: &str) -> anyhow::Result<()> {
    let dirs = Dirs {
        plan_dir: opts.plan_dir.clone(),
        out: opts.out.clone(),
        data: opts.record.data_dir.clone(),
        secrets: opts.secrets.clone(),
    };
    let Some(target) = opts.schedule.targets.iter().find(|t| t.name == name) else {
        let names: Vec<&str> = opts
            .schedule
            .targets
            .iter()
            .map(|t| t.name.as_str())
            .collect();
        bail!(
            "the plan has no target \"{name}\"; its targets are: {}",
            names.join(", ")
        );
    };
    let Access::Managed(m) = &target.access else {
        bail!("target \"{name}\" is not a managed server (it has no `basedir`)");
    };
    let spec = server_spec(target, m, &dirs);
    let mut srv = server::ManagedServer::start(spec, server::flavor_for(target.engine)?)?;
    // The benchmark user's password for this start is made here and given
    // only to whoever started `serve`, on this line: it is in no file.
    crate::outln!(
        "ready target={name} port={} socket={} pid={} datadir={} log={} user=relbench password={}",
        srv.rt.port,
        srv.rt.socket.display(),
        srv.pid().unwrap_or(0),
        srv.rt.datadir.display(),
        srv.rt.log.display(),
        srv.rt.password.expose()
    );
    let closed = std::sync::Arc::new(AtomicBool::new(false));
    let c = closed.clone();
    std::thread::spawn(move || {
        let _ = std::io::copy(&mut std::io::stdin(), &mut std::io::sink());
        c.store(true, Ordering::Relaxed);
    });
    while !closed.load(Ordering::Relaxed) && !runner::INTERRUPT.load(Ordering::Relaxed) {
        if let Some(h) = srv.health() {
            bail!(h);
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    srv.stop()?;
    crate::errln!(
        "stopped; the datadir is kept at {}",
        srv.rt.datadir.display()
    );
    Ok(())
}
