//! Managed servers: relbench initialises a datadir, starts the server on
//! loopback with the target's config file, waits until it answers, and stops
//! it cleanly at the end, on error and on Ctrl-C, checking that it is gone.
//!
//! A managed server is for relbench alone, on a host others share: it runs
//! as an unprivileged OS user, listens on loopback only, whatever the plan's
//! `args` or config say (options that would widen it are refused); its
//! administrator is reachable only through a unix socket in a private
//! directory (mode 0700, random name); and the benchmark user has a random
//! password made for this start, kept in memory, never written. It dies
//! with relbench (the parent-death signal), and a later run stops a stale
//! one it finds by its pid file. relbench never takes over a datadir it did
//! not create: it marks the ones it initialises.
//!
//! The process handling is shared; what differs per engine (binaries, init,
//! start arguments, readiness, how to stop) lives in one file per engine
//! behind [`Flavor`].

mod binaries;
mod datadir;
mod log;

pub use datadir::{check_datadir, chosen_datadir};
pub mod mariadb;
pub mod postgres;

use std::fs;
use std::io::{Read, Seek, SeekFrom, Write};
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use anyhow::{bail, Context};

use crate::measure::size::{self, DbSize};
pub use binaries::{check_binaries, find_binary, find_optional};
use datadir::{
    chown_tree, datadir_state, mark_initialising, mark_ready, pid_file, reachable_by, stop_stale,
    sweep_stale_run_dirs, DatadirState,
};
pub use log::{tail, why};

/// The managed-server half for an engine.
pub fn flavor_for(engine: crate::db::EngineKind) -> anyhow::Result<Box<dyn Flavor>> {
    use crate::db::EngineKind;
    match engine {
        EngineKind::Mysql | EngineKind::Mariadb => Ok(Box::new(mariadb::MariaDb)),
        EngineKind::Postgres => Ok(Box::new(postgres::Postgres)),
        other => bail!("relbench cannot manage {other} servers yet"),
    }
}

/// The OS user a managed server runs as when the plan names none: as
/// root, the engine's own (PostgreSQL refuses root, and a MariaDB running
/// as root would hand root's files to anyone who got in); otherwise the
/// user running relbench (`None`).
pub fn default_user(engine: crate::db::EngineKind) -> Option<&'static str> {
    (crate::util::my_uid() == 0).then_some(match engine {
        crate::db::EngineKind::Postgres => "postgres",
        _ => "mysql",
    })
}

/// A password made for one start of a server: in memory only, and never
/// printed (its `Debug` hides it).
#[derive(Clone, PartialEq)]
pub struct Secret(String);

impl Secret {
    /// 24 random characters from the OS's generator.
    pub fn random() -> anyhow::Result<Secret> {
        let mut bytes = [0u8; 24];
        fs::File::open("/dev/urandom")
            .and_then(|mut f| f.read_exact(&mut bytes))
            .context("reading /dev/urandom for the benchmark user's password")?;
        const ALPHABET: &[u8] = b"ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz23456789";
        Ok(Secret(
            bytes
                .iter()
                .map(|b| ALPHABET[*b as usize % ALPHABET.len()] as char)
                .collect(),
        ))
    }

    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl From<&str> for Secret {
    fn from(s: &str) -> Self {
        Secret(s.to_string())
    }
}

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Secret(…)")
    }
}

/// The file a datadir relbench initialised holds, so that it never takes
/// over (chowns, initialises, removes) a directory it did not create.
pub const DATADIR_MARKER: &str = ".relbench-datadir";

/// What a plan says about a managed server.
#[derive(Debug, Clone, PartialEq)]
pub struct ServerSpec {
    pub target: String,
    /// Where the server's log, its copied config file and its pid file go:
    /// the run's own directory, never beside a datadir the plan names.
    pub log_dir: PathBuf,
    /// Holds bin/, sbin/, libexec/ or scripts/.
    pub basedir: PathBuf,
    /// my.cnf or postgresql.conf, copied beside the datadir and recorded.
    pub config: Option<PathBuf>,
    pub datadir: PathBuf,
    /// Why relbench put the datadir where it did, when not in the results
    /// directory (the server's user cannot reach it): said when it is made.
    pub datadir_note: Option<String>,
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
/// The server answered, but a statement of relbench's set-up failed
/// (accounts, the database): waiting longer will not change that, so the
/// start fails at once instead of at the end of its timeout.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct SetupRefused(pub String);

pub trait Flavor: Send + Sync {
    /// Where clients find the server's unix socket in the run directory:
    /// the socket file (MySQL) or the directory that holds it (PostgreSQL).
    fn socket(&self, run_dir: &Path) -> PathBuf;
    /// The server binary under `basedir`.
    fn server_binary(&self, basedir: &Path) -> anyhow::Result<PathBuf>;
    /// The command that initialises an empty datadir (`rt`: where this
    /// start keeps its private files).
    fn init_command(&self, spec: &ServerSpec, rt: &Runtime) -> anyhow::Result<Command>;
    /// The command that starts the server.
    fn start_command(&self, spec: &ServerSpec, bin: &Path, rt: &Runtime)
        -> anyhow::Result<Command>;
    /// Refuses `args` that would open the server to others (listen beyond
    /// loopback, skip authentication, move the authentication file).
    fn check_args(&self, args: &[String]) -> anyhow::Result<()>;
    /// Refuses a config file's text for the same reasons.
    fn check_config(&self, _text: &str) -> anyhow::Result<()> {
        Ok(())
    }
    /// Connects as the administrator over the private socket and prepares
    /// the server for relbench: the database, the benchmark user with this
    /// start's password and only the rights it needs, no other way in. An
    /// error means "not ready yet".
    fn ready(&self, rt: &Runtime) -> anyhow::Result<()>;
    /// The signal for a clean, prompt shutdown.
    fn stop_signal(&self) -> i32;
    /// Whether a file of the datadir (relative path) is a log: redo, WAL,
    /// binary log. The size is reported with and without them.
    fn is_log(&self, rel: &Path) -> bool;
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
    /// The benchmark user's password for this start.
    pub password: Secret,
}

/// Running managed servers (pid, private directory), so that an abrupt
/// exit (a second Ctrl-C) can still stop them and remove what they used.
static RUNNING: Mutex<Vec<(i32, PathBuf)>> = Mutex::new(Vec::new());

/// Asks every managed server still running to stop, waits a little for
/// them to go, ends those that did not, and removes their private
/// directories; for the exit path that cannot unwind.
pub fn stop_all_now() {
    let running = RUNNING.lock().map(|v| v.clone()).unwrap_or_default();
    let signal = |sig: libc::c_int| {
        for (pid, _) in &running {
            // SAFETY: kill only sends a signal to a process we started
            // (a zombie's pid stays ours until relbench reaps or exits).
            unsafe {
                libc::kill(*pid, sig);
            }
        }
    };
    let alive = |pid: i32| {
        fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|st| {
            st.rsplit_once(") ")
                .is_some_and(|(_, r)| !r.starts_with('Z'))
        })
    };
    let wait = |limit: Duration| {
        let t0 = Instant::now();
        while running.iter().any(|(p, _)| alive(*p)) && t0.elapsed() < limit {
            std::thread::sleep(Duration::from_millis(20));
        }
    };
    signal(libc::SIGTERM);
    wait(Duration::from_secs(3));
    // Regression: a MariaDB still starting blocks SIGTERM and never takes
    // it up (a double Ctrl-C as the server started left it running for
    // good, its datadir and private directory deleted under it, SIGTERM
    // pending). What relbench started ends with it; its data is this
    // run's own, which InnoDB and PostgreSQL recover on `--resume`.
    if running.iter().any(|(p, _)| alive(*p)) {
        signal(libc::SIGKILL);
        wait(Duration::from_secs(2));
    }
    for (_, dir) in &running {
        let _ = fs::remove_dir_all(dir);
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

/// A TCP port on 127.0.0.1 that nothing uses right now, below the kernel's
/// range for outgoing connections: a port from that range (what binding
/// port 0 gives) can be taken by any client's connection in the seconds
/// before the server binds it (CI: a MyRocks start failed with "Address
/// already in use" on 35225 while other tests ran). Port 0 only when no
/// port below the range is free.
fn free_port() -> anyhow::Result<u16> {
    use rand::{Rng, SeedableRng};
    let low = fs::read_to_string("/proc/sys/net/ipv4/ip_local_port_range")
        .ok()
        .and_then(|r| r.split_whitespace().next()?.parse::<u16>().ok())
        .unwrap_or(32768);
    if low > 11000 {
        let mut rng = rand::rngs::SmallRng::seed_from_u64(crate::util::fresh_seed());
        for _ in 0..50 {
            let p = rng.random_range(10000..low);
            if !port_in_use(p) {
                return Ok(p);
            }
        }
    }
    let l = std::net::TcpListener::bind("127.0.0.1:0").context("finding a free port")?;
    Ok(l.local_addr()?.port())
}

/// Whether a server that exited during start-up said its port was taken.
fn lost_its_port(log: &Path) -> bool {
    tail(log, 20).contains("Address already in use")
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

/// A server and its init script get only the environment they need (the
/// search path, the locale, the time zone), not relbench's: nothing of the
/// user's session, no variable a plan's `password_env` names.
fn only_what_it_needs(cmd: &mut Command) {
    const KEEP: [&str; 6] = ["PATH", "LANG", "LC_ALL", "LC_CTYPE", "LC_MESSAGES", "TZ"];
    cmd.env_clear();
    for k in KEEP {
        if let Some(v) = std::env::var_os(k) {
            cmd.env(k, v);
        }
    }
}

impl ManagedServer {
    /// Initialises the datadir if it is new or empty, starts the server and
    /// waits until it is ready. A failure removes what this start created
    /// (the private directory, a datadir it initialised).
    pub fn start(spec: ServerSpec, flavor: Box<dyn Flavor>) -> anyhow::Result<Self> {
        let t = &spec.target;
        flavor.check_args(&spec.args)?;
        let bin = flavor.server_binary(&spec.basedir)?;
        let owner = spec.user.as_deref().map(lookup_user).transpose()?;
        if let Some(m) = &spec.malloc {
            if !m.is_file() {
                bail!(
                    "target \"{t}\": malloc library {} does not exist; install it or fix `malloc`",
                    m.display()
                );
            }
            crate::util::trusted(m, "the malloc library")
                .with_context(|| format!("target \"{t}\""))?;
        }
        let port = match spec.port {
            Some(p) if port_in_use(p) => bail!(
                "target \"{t}\": port {p} on 127.0.0.1 is already in use; stop what listens there or leave `port` out to get a free one"
            ),
            Some(p) => p,
            None => free_port()?,
        };
        crate::util::secure_dir(
            &spec.log_dir,
            &[crate::util::my_uid()],
            &format!("target \"{t}\": the server's log directory"),
        )?;
        if let Some(said) = stop_stale(&spec) {
            crate::errln!("relbench: {said}");
        }
        if let (Some((uid, gid)), Some(user)) = (owner, &spec.user) {
            reachable_by(&spec.datadir, uid, gid, user, t)?;
        }
        let existed = spec.datadir.exists();
        let state = datadir_state(&spec, owner.map(|(uid, _)| uid))?;
        if state == DatadirState::Unfinished {
            // Ours (checked above): what the killed initialisation left.
            crate::errln!(
                "relbench: target \"{t}\": the initialisation of {} did not finish (relbench was stopped); making it again",
                spec.datadir.display()
            );
            // The killed initialisation's bootstrap server (a grandchild,
            // which no death signal reaches) may still be writing there:
            // its datadir is remade only once it is gone. (Reported: a
            // prompt --resume remade the datadir beneath it. Here the
            // bootstrap outlived a SIGKILLed relbench in 3 runs of 3, but a
            // resume finished with or without this wait, so no test shows
            // the harm.)
            datadir::wait_until_unused(&spec.datadir, Duration::from_secs(30))
                .with_context(|| format!("target \"{t}\""))?;
            fs::remove_dir_all(&spec.datadir)
                .with_context(|| format!("removing {}", spec.datadir.display()))?;
            datadir_state(&spec, owner.map(|(uid, _)| uid))?;
        }
        let fresh = state != DatadirState::Ours;
        if let (true, Some(note)) = (fresh, &spec.datadir_note) {
            crate::errln!("relbench: {note}");
        }
        sweep_stale_run_dirs(
            &std::iter::once(crate::util::my_uid())
                .chain(owner.map(|(uid, _)| uid))
                .collect::<Vec<_>>(),
        );
        // Socket paths are limited to ~107 bytes, so they live in a short
        // private directory rather than beside a possibly long datadir.
        let run_dir = crate::util::private_dir("relbench-")?;
        // What this start made goes again when it fails: the private
        // directory, and a datadir it initialised (a half-made one would
        // only be refused next time, and a whole one is hundreds of MB).
        let undo = |spec: &ServerSpec| {
            let _ = fs::remove_dir_all(&run_dir);
            if fresh {
                let _ = fs::remove_dir_all(&spec.datadir);
                if existed {
                    let _ = fs::create_dir(&spec.datadir);
                }
            }
        };
        let started = Self::start_in(&spec, flavor.as_ref(), &bin, owner, port, fresh, &run_dir);
        let (child, rt, config_text) = match started {
            Ok(s) => s,
            Err(e) => {
                undo(&spec);
                return Err(e);
            }
        };
        let mut server = ManagedServer {
            spec,
            flavor,
            child: Some(child),
            rt,
            config_text,
        };
        let mut attempt = 1;
        loop {
            let Err(e) = server.wait_ready() else {
                return Ok(server);
            };
            let _ = server.stop();
            // A port relbench chose was taken between its choice and the
            // server's bind: another port, with the datadir as it is now
            // (initialised, if this start initialised it).
            if server.spec.port.is_none() && attempt < 4 && lost_its_port(&server.rt.log) {
                attempt += 1;
                crate::errln!(
                    "relbench: target \"{}\": port {} was taken before the server could listen; trying another",
                    server.spec.target,
                    server.rt.port
                );
                let again = free_port().and_then(|port| {
                    let dir = crate::util::private_dir("relbench-")?;
                    let s = &server.spec;
                    Self::start_in(s, server.flavor.as_ref(), &bin, owner, port, false, &dir)
                        .inspect_err(|_| {
                            let _ = fs::remove_dir_all(&dir);
                        })
                });
                match again {
                    Ok((child, rt, config_text)) => {
                        (server.child, server.rt) = (Some(child), rt);
                        server.config_text = config_text;
                        continue;
                    }
                    Err(e) => {
                        undo(&server.spec);
                        return Err(e);
                    }
                }
            }
            undo(&server.spec);
            return Err(e);
        }
    }

    /// Everything up to the started process: the log, the config copy, the
    /// datadir (initialised when `fresh`), ownership, the spawn.
    fn start_in(
        spec: &ServerSpec,
        flavor: &dyn Flavor,
        bin: &Path,
        owner: Option<(u32, u32)>,
        port: u16,
        fresh: bool,
        run_dir: &Path,
    ) -> anyhow::Result<(Child, Runtime, Option<String>)> {
        let t = &spec.target;
        let log = spec.log_dir.join(format!("{t}.server.log"));
        let config = match &spec.config {
            Some(c) => {
                let copy = spec.log_dir.join(format!(
                    "{t}.{}",
                    c.file_name().and_then(|n| n.to_str()).unwrap_or("conf")
                ));
                let text = fs::read(c).with_context(|| {
                    format!(
                        "target \"{t}\": reading its config file {}; fix `config`",
                        c.display()
                    )
                })?;
                crate::util::write_file(&copy, &text)?;
                Some(copy)
            }
            None => None,
        };
        let config_text = config
            .as_ref()
            .map(|c| fs::read_to_string(c).unwrap_or_default());
        // Each start's log is kept: appended after a line that says when.
        let mut logf = fs::OpenOptions::new()
            .create(true)
            .append(true)
            .custom_flags(libc::O_NOFOLLOW)
            .open(&log)
            .with_context(|| format!("opening {}", log.display()))?;
        writeln!(
            logf,
            "----- relbench (pid {}) starts the server of target \"{t}\" at {} -----",
            std::process::id(),
            crate::util::utc_iso(crate::util::unix_now())
        )?;

        if fresh {
            // The server's alone: nobody else may read or add files.
            fs::set_permissions(&spec.datadir, fs::Permissions::from_mode(0o700))
                .with_context(|| format!("making {} private", spec.datadir.display()))?;
            mark_initialising(spec)?;
        }
        if let Some((uid, gid)) = owner {
            chown_tree(&spec.datadir, uid, gid)?;
            chown_tree(run_dir, uid, gid)?;
            chown_tree(&log, uid, gid)?;
            if let Some(c) = &config {
                chown_tree(c, uid, gid)?;
            }
        }
        let rt = Runtime {
            port,
            socket: flavor.socket(run_dir),
            run_dir: run_dir.to_path_buf(),
            log,
            config,
            datadir: spec.datadir.clone(),
            password: Secret::random()?,
        };
        if fresh {
            let mut cmd = flavor.init_command(spec, &rt)?;
            only_what_it_needs(&mut cmd);
            if let Some((uid, gid)) = owner {
                cmd.uid(uid).gid(gid);
            }
            let out = cmd
                .output()
                .with_context(|| format!("target \"{t}\": running {:?}", cmd.get_program()))?;
            if !out.status.success() {
                // All of it goes to the log; the message shows the lines
                // that say why.
                let text = format!(
                    "{}{}",
                    String::from_utf8_lossy(&out.stdout),
                    String::from_utf8_lossy(&out.stderr)
                );
                let _ = writeln!(
                    logf,
                    "initialising with {:?} failed ({}):\n{text}",
                    cmd, out.status
                );
                bail!(
                    "target \"{t}\": initialising {} failed ({}); what it said:\n{}\n(all of its output: {})",
                    spec.datadir.display(),
                    out.status,
                    why(&text, 12),
                    rt.log.display()
                );
            }
            mark_ready(spec)?;
        }

        let mut cmd = flavor.start_command(spec, bin, &rt)?;
        only_what_it_needs(&mut cmd);
        if let Some(m) = &spec.malloc {
            cmd.env("LD_PRELOAD", m);
        }
        if let Some((uid, gid)) = owner {
            cmd.uid(uid).gid(gid);
        }
        cmd.stdin(Stdio::null())
            .stdout(logf.try_clone()?)
            .stderr(logf);
        // Its own process group: a Ctrl-C in the terminal reaches relbench,
        // which stops the server in order, instead of killing it mid-write.
        cmd.process_group(0);
        // The server dies with relbench, however relbench ends (SIGKILL
        // too): the kernel sends it the stop signal when its parent goes.
        let stop = flavor.stop_signal();
        let parent = std::process::id() as libc::pid_t;
        // SAFETY: between fork and exec only async-signal-safe calls
        // (prctl, getppid, _exit); this runs after the uid change, which
        // would otherwise clear the setting.
        unsafe {
            cmd.pre_exec(move || {
                if libc::prctl(libc::PR_SET_PDEATHSIG, stop as libc::c_ulong) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                if libc::getppid() != parent {
                    libc::_exit(1);
                }
                Ok(())
            });
        }
        let child = cmd
            .spawn()
            .with_context(|| format!("target \"{t}\": starting {}", bin.display()))?;
        RUNNING
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push((child.id() as i32, run_dir.to_path_buf()));
        // Through the safe writer (no link followed); a server that runs
        // without its pid file is only not stopped by a later relbench.
        if let Err(e) =
            crate::util::write_file(&pid_file(spec), format!("{}\n", child.id()).as_bytes())
        {
            crate::errln!("relbench: target \"{t}\": {e:#}");
        }
        Ok((child, rt, config_text))
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
                Err(e) if e.is::<SetupRefused>() => {
                    let _ = self.stop();
                    bail!(
                        "target \"{}\": the server started but refused relbench's set-up ({e:#}); the end of its log ({}):\n{}",
                        self.spec.target,
                        self.rt.log.display(),
                        tail(&self.rt.log, 20)
                    );
                }
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
            .retain(|(p, _)| *p != pid);
        let _ = fs::remove_dir_all(&self.rt.run_dir);
        let _ = fs::remove_file(pid_file(&self.spec));
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

    pub fn data_size(&self) -> Option<DbSize> {
        self.lock()
            .and_then(|s| size::of_dir(&s.rt.datadir, &|p| s.flavor.is_log(p)))
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
                datadir::remove_moved_parent(&d);
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests;
