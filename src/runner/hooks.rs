//! Hooks: a statement or a shell command the plan runs before or after a
//! step or a phase (`PURGE BINARY LOGS`, `SHOW ENGINE INNODB STATUS`,
//! dropping the page cache, starting `perf record`). They run outside the
//! measured window; what they print is kept under `hooks/` in the results,
//! their time and file are in the step's notes, and a hook that fails or
//! outlives its timeout fails its step with what it said.

use std::collections::BTreeMap;
use std::fs::{self, File, OpenOptions};
use std::os::unix::fs::OpenOptionsExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::Context;

use super::events::Sinks;
use crate::db::Target;
use crate::plan::schedule::{Execution, Hook, HookAction};

/// What the hooks around one execution did.
#[derive(Default)]
pub(super) struct Ran {
    /// `hook.before.1` → "sql `…`: 0.012 s, output hooks/….txt".
    pub notes: BTreeMap<String, String>,
    /// The first failure, in words; the hooks after it did not run.
    pub failed: Option<String>,
}

/// Runs the hooks the schedule put at this moment (`before` or `after`)
/// of an execution, in plan order.
pub(super) fn run(
    db: &dyn Target,
    e: &Execution,
    hooks: &[Hook],
    moment: &str,
    out: &Path,
    sinks: &mut Sinks,
) -> anyhow::Result<Ran> {
    let mut ran = Ran::default();
    let target = &e.settings;
    for (i, h) in hooks.iter().enumerate() {
        let dir = out.join("hooks");
        fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
        let stem = format!(
            "{}-r{}-{:03}-{}-c{}.{moment}.{}",
            target.name,
            e.id.repeat,
            e.id.seq,
            e.id.at.step.label(),
            e.id.at.clients,
            i + 1
        );
        let (path, mut file) = new_file(&dir, &stem)?;
        let timeout = Duration::from_secs_f64(h.timeout_secs);
        let t0 = Instant::now();
        let (what, result) = match &h.action {
            HookAction::Sql(sql) => (
                format!("sql `{sql}`"),
                sql_hook(db, sql, timeout, &mut file),
            ),
            HookAction::Shell(cmd) => {
                let env = env_of(db, e, moment, out);
                (
                    format!("shell `{cmd}`"),
                    shell_hook(cmd, &env, timeout, file),
                )
            }
        };
        let secs = t0.elapsed().as_secs_f64();
        let rel = path
            .strip_prefix(out)
            .unwrap_or(&path)
            .display()
            .to_string();
        ran.notes.insert(
            format!("hook.{moment}.{}", i + 1),
            format!("{what}: {secs:.3} s, output {rel}"),
        );
        if let Err(err) = result {
            let msg =
                format!("the hook {moment} the step ({what}) failed: {err:#} (its output: {rel})");
            sinks.warn(&format!("[{}] {msg}", target.name));
            ran.failed = Some(msg);
            break;
        }
    }
    Ok(ran)
}

/// A new file of ours for a hook's output; a resumed run's second
/// attempt gets `.2`, never another's file.
fn new_file(dir: &Path, stem: &str) -> anyhow::Result<(PathBuf, File)> {
    for n in 1..1000 {
        let name = if n == 1 {
            format!("{stem}.txt")
        } else {
            format!("{stem}.{n}.txt")
        };
        let path = dir.join(name);
        match OpenOptions::new()
            .write(true)
            .create_new(true)
            .custom_flags(libc::O_NOFOLLOW)
            .open(&path)
        {
            Ok(f) => return Ok((path, f)),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e).with_context(|| format!("creating {}", path.display())),
        }
    }
    anyhow::bail!("{}: a thousand outputs of one hook already", dir.display())
}

/// The statement's rows, tab-separated, one per line.
fn sql_hook(db: &dyn Target, sql: &str, timeout: Duration, file: &mut File) -> anyhow::Result<()> {
    use std::io::Write;
    let rows = db.admin_sql(sql, Some(timeout)).map_err(|e| {
        if crate::db::DbError::is_timeout(&e) {
            anyhow::anyhow!(
                "no answer within {} s (the server may run it on until it next writes to the connection): {e:#}",
                timeout.as_secs_f64()
            )
        } else {
            e
        }
    })?;
    for r in rows {
        let cells: Vec<&str> = r.iter().map(|c| c.as_deref().unwrap_or("NULL")).collect();
        writeln!(file, "{}", cells.join("\t"))?;
    }
    Ok(())
}

/// What a shell hook is told about where it runs.
fn env_of(db: &dyn Target, e: &Execution, moment: &str, out: &Path) -> Vec<(&'static str, String)> {
    let mut env = vec![
        ("RELBENCH_TARGET", e.settings.name.clone()),
        ("RELBENCH_STEP", e.id.at.step.label()),
        ("RELBENCH_CLIENTS", e.id.at.clients.to_string()),
        ("RELBENCH_REPEAT", e.id.repeat.to_string()),
        ("RELBENCH_WHEN", moment.to_string()),
        ("RELBENCH_OUT", out.display().to_string()),
    ];
    if let Some(p) = &e.id.at.phase {
        env.push(("RELBENCH_PHASE", p.clone()));
    }
    if let Some(d) = db.data_dir() {
        env.push(("RELBENCH_DATADIR", d.display().to_string()));
    }
    if let Some(pid) = db.server_pid() {
        env.push(("RELBENCH_SERVER_PID", pid.to_string()));
    }
    env
}

/// `/bin/sh -c cmd` in its own process group, output to `file`; at the
/// timeout the group is killed (it is ours: we started it).
fn shell_hook(
    cmd: &str,
    env: &[(&'static str, String)],
    timeout: Duration,
    file: File,
) -> anyhow::Result<()> {
    let mut c = Command::new("/bin/sh");
    c.arg("-c")
        .arg(cmd)
        .stdin(Stdio::null())
        .stdout(file.try_clone()?)
        .stderr(file)
        .process_group(0);
    for (k, v) in env {
        c.env(k, v);
    }
    let mut child = c.spawn().context("starting /bin/sh")?;
    let t0 = Instant::now();
    loop {
        if let Some(status) = child.try_wait()? {
            if status.success() {
                return Ok(());
            }
            anyhow::bail!("it exited with {status}");
        }
        if t0.elapsed() >= timeout {
            // SAFETY: a signal to the process group this call started.
            unsafe {
                libc::kill(-(child.id() as i32), libc::SIGKILL);
            }
            let _ = child.wait();
            anyhow::bail!(
                "it ran past its timeout of {} s and was killed",
                timeout.as_secs_f64()
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}
