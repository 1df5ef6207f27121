//! Managed servers: relbench initialises a datadir, starts the server on
//! loopback with the target's config file, waits until it answers, and stops
//! it cleanly at the end, on error and on Ctrl-C, checking that it is gone.
//!
//! The process handling is shared; what differs per engine (binaries, init,
//! start arguments, readiness, how to stop) lives in one file per engine
//! behind [`Flavor`].

pub mod mariadb;
pub mod postgres;

use std::fs;
use std::io::{Read, Seek, SeekFrom};
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use anyhow::{bail, Context};

/// The managed-server half for an engine.
pub fn flavor_for(engine: crate::db::EngineKind) -> anyhow::Result<Box<dyn Flavor>> {
    use crate::db::EngineKind;
    match engine {
        EngineKind::Mysql | EngineKind::Mariadb => Ok(Box::new(mariadb::MariaDb)),
        EngineKind::Postgres => Ok(Box::new(postgres::Postgres)),
        other => bail!("relbench cannot manage {other} servers yet"),
    }
}

/// What a plan says about a managed server.
#[derive(Debug, Clone, PartialEq)]
pub struct ServerSpec {
    pub target: String,
    /// Holds bin/, sbin/, libexec/ or scripts/.
    pub basedir: PathBuf,
    /// my.cnf or postgresql.conf, copied beside the datadir and recorded.
    pub config: Option<PathBuf>,
    pub datadir: PathBuf,
    pub port: Option<u16>,
    /// OS user the server runs as (PostgreSQL refuses root).
    pub user: Option<String>,
    pub args: Vec<String>,
    /// A malloc library to preload (jemalloc, tcmalloc).
    pub malloc: Option<PathBuf>,
    /// Plugins to load at start-up (MyRocks must be loaded then).
    pub plugins: Vec<String>,
    pub start_timeout: Duration,
}

/// The engine-specific half of a managed server.
pub trait Flavor: Send + Sync {
    /// Where clients find the server's unix socket in the run directory:
    /// the socket file (MySQL) or the directory that holds it (PostgreSQL).
    fn socket(&self, run_dir: &Path) -> PathBuf;
    /// The server binary under `basedir`.
    fn server_binary(&self, basedir: &Path) -> anyhow::Result<PathBuf>;
    /// The command that initialises an empty datadir.
    fn init_command(&self, spec: &ServerSpec) -> anyhow::Result<Command>;
    /// The command that starts the server.
    fn start_command(&self, spec: &ServerSpec, bin: &Path, rt: &Runtime)
        -> anyhow::Result<Command>;
    /// Connects and prepares the server for relbench (database, user);
    /// an error means "not ready yet".
    fn ready(&self, rt: &Runtime) -> anyhow::Result<()>;
    /// The signal for a clean, prompt shutdown.
    fn stop_signal(&self) -> i32;
}

/// Where a started server can be reached.
#[derive(Debug, Clone)]
pub struct Runtime {
    pub port: u16,
    /// A private directory for the socket, lock and pid files.
    pub run_dir: PathBuf,
    /// The unix socket file (MySQL) or its directory (PostgreSQL).
    pub socket: PathBuf,
    pub log: PathBuf,
    /// The config file as copied for this run.
    pub config: Option<PathBuf>,
    pub datadir: PathBuf,
}

/// PIDs of running managed servers, so that an abrupt exit (a second
/// Ctrl-C) can still stop them.
static RUNNING: Mutex<Vec<i32>> = Mutex::new(Vec::new());

/// Asks every managed server still running to stop; for the exit path
/// that cannot unwind.
pub fn stop_all_now() {
    let pids = RUNNING.lock().map(|v| v.clone()).unwrap_or_default();
    for pid in pids {
        // SAFETY: kill only sends a signal to a process we started.
        unsafe {
            libc::kill(pid, libc::SIGTERM);
        }
    }
}

pub struct ManagedServer {
    pub spec: ServerSpec,
    flavor: Box<dyn Flavor>,
    child: Option<Child>,
    pub rt: Runtime,
    /// The config file's text, for the results.
    pub config_text: Option<String>,
}

/// Looks for the first of `names` in the usual places under `basedir`.
pub fn find_binary(basedir: &Path, names: &[&str]) -> anyhow::Result<PathBuf> {
    for dir in ["bin", "sbin", "libexec", "scripts", ""] {
        for n in names {
            let p = basedir.join(dir).join(n);
            if p.is_file() {
                return Ok(p);
            }
        }
    }
    bail!(
        "no {} under {}/{{bin,sbin,libexec,scripts}}; point `basedir` at the directory that holds them \
         (for Debian's packages: /usr for MariaDB, /usr/lib/postgresql/<version> for PostgreSQL)",
        names.join(" or "),
        basedir.display()
    )
}

/// A TCP port on 127.0.0.1 that nothing listens on right now.
fn free_port() -> anyhow::Result<u16> {
    let l = std::net::TcpListener::bind("127.0.0.1:0").context("finding a free port")?;
    Ok(l.local_addr()?.port())
}

fn port_in_use(port: u16) -> bool {
    std::net::TcpListener::bind(("127.0.0.1", port)).is_err()
}

/// uid and gid of an OS user.
pub fn lookup_user(name: &str) -> anyhow::Result<(u32, u32)> {
    let c = std::ffi::CString::new(name)?;
    // SAFETY: getpwnam returns a pointer into static storage or null; we copy
    // the two fields out at once.
    let pw = unsafe { libc::getpwnam(c.as_ptr()) };
    if pw.is_null() {
        bail!("there is no OS user \"{name}\"; create it or set `user` to an existing one");
    }
    Ok(unsafe { ((*pw).pw_uid, (*pw).pw_gid) })
}

fn chown_tree(path: &Path, uid: u32, gid: u32) -> anyhow::Result<()> {
    std::os::unix::fs::chown(path, Some(uid), Some(gid))
        .with_context(|| format!("giving {} to uid {uid}", path.display()))?;
    if path.is_dir() {
        for e in fs::read_dir(path)? {
            chown_tree(&e?.path(), uid, gid)?;
        }
    }
    Ok(())
}

/// Checks that every directory above `path` lets `user` through, since the
/// server runs as that user (a temporary directory is often root's alone).
fn reachable_by(path: &Path, uid: u32, gid: u32, user: &str, target: &str) -> anyhow::Result<()> {
    use std::os::unix::fs::MetadataExt;
    for dir in path.ancestors().skip(1) {
        let Ok(m) = fs::metadata(dir) else { continue };
        let mode = m.mode();
        let ok = if m.uid() == uid {
            mode & 0o100 != 0
        } else if m.gid() == gid {
            mode & 0o010 != 0
        } else {
            mode & 0o001 != 0
        };
        if !ok {
            bail!(
                "target \"{target}\": the server runs as {user}, who cannot reach {}: {} is not searchable by it; \
                 set `datadir` somewhere {user} can reach, or `chmod o+x {}`",
                path.display(),
                dir.display(),
                dir.display()
            );
        }
    }
    Ok(())
}

/// The last `lines` lines of a log file.
pub fn tail(path: &Path, lines: usize) -> String {
    let Ok(mut f) = fs::File::open(path) else {
        return format!("(no log at {})", path.display());
    };
    let len = f.metadata().map_or(0, |m| m.len());
    let _ = f.seek(SeekFrom::Start(len.saturating_sub(16 * 1024)));
    let mut s = String::new();
    let _ = f.read_to_string(&mut s);
    let all: Vec<&str> = s.lines().collect();
    all[all.len().saturating_sub(lines)..].join("\n")
}

impl ManagedServer {
    /// Initialises the datadir if it is empty, starts the server and waits
    /// until it is ready.
    pub fn start(spec: ServerSpec, flavor: Box<dyn Flavor>) -> anyhow::Result<Self> {
        let t = &spec.target;
        let bin = flavor.server_binary(&spec.basedir)?;
        let owner = spec.user.as_deref().map(lookup_user).transpose()?;
        if let Some(m) = &spec.malloc {
            if !m.is_file() {
                bail!(
                    "target \"{t}\": malloc library {} does not exist; install it or fix `malloc`",
                    m.display()
                );
            }
        }
        let port = match spec.port {
            Some(p) if port_in_use(p) => bail!(
                "target \"{t}\": port {p} on 127.0.0.1 is already in use; stop what listens there or leave `port` out to get a free one"
            ),
            Some(p) => p,
            None => free_port()?,
        };
        // Socket paths are limited to ~107 bytes, so they live in a short
        // private directory rather than beside a possibly long datadir.
        let run_dir = std::env::temp_dir().join(format!("relbench-{}-{}", std::process::id(), t));
        fs::create_dir_all(&run_dir).with_context(|| format!("creating {}", run_dir.display()))?;
        fs::set_permissions(&run_dir, fs::Permissions::from_mode(0o700))?;

        let parent = spec.datadir.parent().unwrap_or(Path::new("/"));
        fs::create_dir_all(parent).with_context(|| format!("creating {}", parent.display()))?;
        let log = parent.join(format!("{t}.server.log"));
        let config = match &spec.config {
            Some(c) => {
                let copy = parent.join(format!(
                    "{t}.{}",
                    c.file_name().and_then(|n| n.to_str()).unwrap_or("conf")
                ));
                fs::copy(c, &copy).with_context(|| {
                    format!(
                        "target \"{t}\": reading its config file {}; fix `config`",
                        c.display()
                    )
                })?;
                Some(copy)
            }
            None => None,
        };
        let config_text = config
            .as_ref()
            .map(|c| fs::read_to_string(c).unwrap_or_default());
        fs::write(&log, b"").with_context(|| format!("creating {}", log.display()))?;

        let empty = fs::read_dir(&spec.datadir).map_or(true, |mut d| d.next().is_none());
        if let (Some((uid, gid)), Some(user)) = (owner, &spec.user) {
            reachable_by(&spec.datadir, uid, gid, user, t)?;
        }
        if let Some((uid, gid)) = owner {
            fs::create_dir_all(&spec.datadir)?;
            chown_tree(&spec.datadir, uid, gid)?;
            chown_tree(&run_dir, uid, gid)?;
            chown_tree(&log, uid, gid)?;
            if let Some(c) = &config {
                chown_tree(c, uid, gid)?;
            }
        }
        let rt = Runtime {
            port,
            socket: flavor.socket(&run_dir),
            run_dir,
            log,
            config,
            datadir: spec.datadir.clone(),
        };
        if empty {
            let mut cmd = flavor.init_command(&spec)?;
            if let Some((uid, gid)) = owner {
                cmd.uid(uid).gid(gid);
            }
            let out = cmd
                .output()
                .with_context(|| format!("target \"{t}\": running {:?}", cmd.get_program()))?;
            if !out.status.success() {
                bail!(
                    "target \"{t}\": initialising {} failed ({}):\n{}{}",
                    spec.datadir.display(),
                    out.status,
                    String::from_utf8_lossy(&out.stdout),
                    String::from_utf8_lossy(&out.stderr)
                );
            }
        }

        let mut cmd = flavor.start_command(&spec, &bin, &rt)?;
        if let Some(m) = &spec.malloc {
            cmd.env("LD_PRELOAD", m);
        }
        if let Some((uid, gid)) = owner {
            cmd.uid(uid).gid(gid);
        }
        let logf = fs::OpenOptions::new().append(true).open(&rt.log)?;
        cmd.stdin(Stdio::null())
            .stdout(logf.try_clone()?)
            .stderr(logf);
        // Its own process group: a Ctrl-C in the terminal reaches relbench,
        // which stops the server in order, instead of killing it mid-write.
        cmd.process_group(0);
        let child = cmd
            .spawn()
            .with_context(|| format!("target \"{t}\": starting {}", bin.display()))?;
        RUNNING
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(child.id() as i32);
        let mut server = ManagedServer {
            spec,
            flavor,
            child: Some(child),
            rt,
            config_text,
        };
        server.wait_ready()?;
        Ok(server)
    }

    fn wait_ready(&mut self) -> anyhow::Result<()> {
        let t0 = Instant::now();
        let timeout = self.spec.start_timeout;
        loop {
            if let Some(status) = self.exit_status() {
                bail!(
                    "target \"{}\": the server exited during start-up ({status}); the end of its log ({}):\n{}",
                    self.spec.target,
                    self.rt.log.display(),
                    tail(&self.rt.log, 20)
                );
            }
            match self.flavor.ready(&self.rt) {
                Ok(()) => return Ok(()),
                Err(e) if t0.elapsed() > timeout => {
                    let _ = self.stop();
                    bail!(
                        "target \"{}\": the server did not answer within {} s ({e:#}); the end of its log ({}):\n{}",
                        self.spec.target,
                        timeout.as_secs(),
                        self.rt.log.display(),
                        tail(&self.rt.log, 20)
                    );
                }
                Err(_) => std::thread::sleep(Duration::from_millis(100)),
            }
        }
    }

    pub fn pid(&self) -> Option<u32> {
        self.child.as_ref().map(|c| c.id())
    }

    /// The exit status, if the server has exited.
    pub fn exit_status(&mut self) -> Option<ExitStatus> {
        self.child
            .as_mut()
            .and_then(|c| c.try_wait().ok().flatten())
    }

    /// `None` while the server runs; why it is gone otherwise.
    pub fn health(&mut self) -> Option<String> {
        let status = self.exit_status()?;
        Some(format!(
            "the server of target \"{}\" exited ({status}); the end of its log ({}):\n{}",
            self.spec.target,
            self.rt.log.display(),
            tail(&self.rt.log, 20)
        ))
    }

    /// Stops the server cleanly, waits until the process is gone, and kills
    /// it if it does not stop in time.
    pub fn stop(&mut self) -> anyhow::Result<()> {
        let Some(mut child) = self.child.take() else {
            return Ok(());
        };
        let pid = child.id() as i32;
        let result = (|| {
            if child.try_wait()?.is_some() {
                return Ok(());
            }
            // SAFETY: a signal to the process we started and still own.
            unsafe {
                libc::kill(pid, self.flavor.stop_signal());
            }
            let t0 = Instant::now();
            while t0.elapsed() < Duration::from_secs(180) {
                if child.try_wait()?.is_some() {
                    return Ok(());
                }
                std::thread::sleep(Duration::from_millis(50));
            }
            child.kill()?;
            child.wait()?;
            bail!(
                "target \"{}\": the server did not stop within 180 s and was killed; its log: {}",
                self.spec.target,
                self.rt.log.display()
            )
        })();
        RUNNING
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .retain(|p| *p != pid);
        let _ = fs::remove_dir_all(&self.rt.run_dir);
        result
    }
}

impl Drop for ManagedServer {
    fn drop(&mut self) {
        if let Err(e) = self.stop() {
            crate::errln!("relbench: {e:#}");
        }
    }
}

/// A driver's hold on the server it manages, if it manages one: the
/// lifecycle facts every server driver reports the same way.
pub struct Handle {
    server: Option<Mutex<ManagedServer>>,
    /// Remove the datadir when the sequence is done (relbench chose it).
    remove_datadir: bool,
}

impl Handle {
    /// A server someone else runs.
    pub fn none() -> Self {
        Handle {
            server: None,
            remove_datadir: false,
        }
    }

    pub fn managed(server: ManagedServer, remove_datadir: bool) -> Self {
        Handle {
            server: Some(Mutex::new(server)),
            remove_datadir,
        }
    }

    pub fn lock(&self) -> Option<std::sync::MutexGuard<'_, ManagedServer>> {
        self.server
            .as_ref()
            .map(|m| m.lock().unwrap_or_else(|p| p.into_inner()))
    }

    /// The datadir and the config file's text, for the results.
    pub fn recorded(&self) -> (Option<String>, Option<String>) {
        match self.lock() {
            Some(s) => (
                Some(s.rt.datadir.display().to_string()),
                s.config_text.clone(),
            ),
            None => (None, None),
        }
    }

    pub fn data_size(&self) -> Option<u64> {
        self.lock().and_then(|s| dir_size(&s.rt.datadir))
    }

    pub fn data_dir(&self) -> Option<PathBuf> {
        self.lock().map(|s| s.rt.datadir.clone())
    }

    /// The server's root process, while it is managed.
    pub fn pid(&self) -> Option<u32> {
        self.lock()?.pid()
    }

    pub fn health(&self) -> Option<String> {
        self.lock().and_then(|mut s| s.health())
    }

    /// Stops the server and, when `remove_data` and relbench chose the
    /// datadir, removes it.
    pub fn cleanup(&self, remove_data: bool) -> anyhow::Result<()> {
        if let Some(mut s) = self.lock() {
            s.stop()?;
            if remove_data && self.remove_datadir {
                let d = s.rt.datadir.clone();
                fs::remove_dir_all(&d).with_context(|| format!("removing {}", d.display()))?;
            }
        }
        Ok(())
    }
}

/// Bytes of all files under `dir`.
pub fn dir_size(dir: &Path) -> Option<u64> {
    fn walk(p: &Path) -> u64 {
        match fs::symlink_metadata(p) {
            Ok(m) if m.is_dir() => fs::read_dir(p)
                .map(|d| d.flatten().map(|e| walk(&e.path())).sum())
                .unwrap_or(0),
            Ok(m) => m.len(),
            Err(_) => 0,
        }
    }
    fs::metadata(dir).ok()?;
    Some(walk(dir))
}
