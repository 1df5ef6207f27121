//! A managed server's directories: private ones relbench makes, the
//! datadir's state (ours, empty, or someone else's), the pid file of a
//! server an earlier run left, and whether the server's user can reach
//! its files.

use super::*;

/// Gives a tree relbench made to the server's user, all but the datadir's
/// marker. Symbolic links are changed themselves, never followed: a link
/// planted in a datadir cannot hand anything outside it to the server.
pub(super) fn chown_tree(path: &Path, uid: u32, gid: u32) -> anyhow::Result<()> {
    // The marker stays relbench's: its owner is what vouches for it.
    if path.file_name().is_some_and(|n| n == DATADIR_MARKER) {
        return Ok(());
    }
    std::os::unix::fs::lchown(path, Some(uid), Some(gid))
        .with_context(|| format!("giving {} to uid {uid}", path.display()))?;
    if fs::symlink_metadata(path)?.is_dir() {
        for e in fs::read_dir(path)? {
            chown_tree(&e?.path(), uid, gid)?;
        }
    }
    Ok(())
}

/// What relbench may do with a datadir.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum DatadirState {
    /// New or empty: initialise it.
    Fresh,
    /// Initialised by relbench before: start it.
    Ours,
    /// relbench began to initialise it and was stopped (killed during
    /// `mariadb-install-db` or `initdb`): made again.
    Unfinished,
}

/// The record, in the run's own directory, of a datadir this run is
/// initialising: written before the init command runs, so a run killed
/// meanwhile knows the half-made datadir as its own on `--resume`.
pub(super) fn init_record(spec: &ServerSpec) -> PathBuf {
    spec.log_dir.join(format!("{}.datadir-init", spec.target))
}

/// The device and inode of a directory: what a marker names, so that a
/// marker copied into another directory does not vouch for it.
fn identity(path: &Path) -> anyhow::Result<String> {
    use std::os::unix::fs::MetadataExt;
    let m = fs::symlink_metadata(path).with_context(|| format!("reading {}", path.display()))?;
    Ok(format!("device {} inode {}", m.dev(), m.ino()))
}

/// Writes the marker of a datadir relbench initialised (owned by this
/// user, naming the directory's device and inode), and clears the record
/// of the initialisation in the run's directory.
pub(super) fn mark_ready(spec: &ServerSpec) -> anyhow::Result<()> {
    let body = format!(
        "initialised by relbench for target \"{}\"\n{}\n",
        spec.target,
        identity(&spec.datadir)?
    );
    crate::util::write_file(&spec.datadir.join(DATADIR_MARKER), body.as_bytes())?;
    let _ = fs::remove_file(init_record(spec));
    Ok(())
}

/// Says, in the run's own directory, that relbench begins to initialise
/// this datadir (see [`init_record`]).
pub(super) fn mark_initialising(spec: &ServerSpec) -> anyhow::Result<()> {
    let body = format!("{}\n{}\n", spec.datadir.display(), identity(&spec.datadir)?);
    crate::util::write_file(&init_record(spec), body.as_bytes())
}

/// What relbench may do with a datadir: initialise it (it is new or
/// empty), start it (relbench initialised it before), or make it again
/// (relbench's own initialisation did not finish). Trust comes from
/// ownership, not from a file's presence: the directory must be owned by
/// this user or the server's, writable by no one else, and its marker a
/// file relbench wrote naming this very directory. Anything else is
/// someone else's and is refused, untouched. A missing datadir is made
/// here, with `mkdir`, never through a link.
pub(super) fn datadir_state(
    spec: &ServerSpec,
    server_uid: Option<u32>,
) -> anyhow::Result<DatadirState> {
    let (datadir, target) = (&spec.datadir, &spec.target);
    let owners: Vec<u32> = std::iter::once(crate::util::my_uid())
        .chain(server_uid)
        .collect();
    let what = format!("target \"{target}\": datadir");
    kind_of_path(datadir, &what)?;
    if let Some(parent) = moved_parent(datadir) {
        claim_moved_parent(parent, &what)?;
    }
    crate::util::secure_dir(datadir, &owners, &what)?;
    match inspect(datadir, &owners, &what)? {
        Seen::Empty => Ok(DatadirState::Fresh),
        Seen::Marked => Ok(DatadirState::Ours),
        Seen::Unmarked => {
            // No marker: relbench's own initialisation, cut short, if this
            // run's record names this very directory.
            let record = fs::read_to_string(init_record(spec)).unwrap_or_default();
            let mut lines = record.lines();
            if lines.next() == Some(&*datadir.to_string_lossy())
                && lines.next() == Some(&*identity(datadir)?)
            {
                return Ok(DatadirState::Unfinished);
            }
            bail!(
                "{what} {} is not empty and relbench did not create it (it has no {DATADIR_MARKER}); \
                 relbench takes over nothing it did not make: point `datadir` at a new or empty directory",
                datadir.display()
            )
        }
    }
}

/// Waits until no process names `datadir` on its command line (a
/// bootstrap server left by a killed initialisation ends within seconds,
/// once its script is gone); refuses after `limit`, naming the process.
pub(super) fn wait_until_unused(datadir: &Path, limit: std::time::Duration) -> anyhow::Result<()> {
    let needle = datadir.to_string_lossy().into_owned();
    let using = || -> Option<(u32, String)> {
        fs::read_dir("/proc").ok()?.flatten().find_map(|e| {
            let pid: u32 = e.file_name().to_str()?.parse().ok()?;
            if pid == std::process::id() {
                return None;
            }
            let cmd = fs::read(e.path().join("cmdline")).ok()?;
            let cmd = String::from_utf8_lossy(&cmd).replace('\0', " ");
            cmd.contains(&needle).then_some((pid, cmd))
        })
    };
    let t0 = std::time::Instant::now();
    while let Some((pid, cmd)) = using() {
        if t0.elapsed() >= limit {
            bail!(
                "process {pid} ({}) still uses {} {:.0} s after the initialisation was cut short; \
                 stop it, then run again",
                crate::util::printable(&cmd, 120),
                datadir.display(),
                limit.as_secs_f64()
            );
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    Ok(())
}

/// The checks of [`datadir_state`] that need no run, for `relbench
/// check`: what a run would refuse is said before it starts. Nothing is
/// made or changed.
pub fn check_datadir(datadir: &Path, server_uid: Option<u32>) -> anyhow::Result<()> {
    let owners: Vec<u32> = std::iter::once(crate::util::my_uid())
        .chain(server_uid)
        .collect();
    let what = "datadir";
    kind_of_path(datadir, what)?;
    crate::util::check_dir(datadir, &owners, what)?;
    if !datadir.exists() {
        return Ok(());
    }
    match inspect(datadir, &owners, what)? {
        Seen::Empty | Seen::Marked => Ok(()),
        Seen::Unmarked => bail!(
            "datadir {} is not empty and relbench did not create it (it has no {DATADIR_MARKER}); point \
             `datadir` at a new or empty directory (if a relbench run was killed while it initialised this \
             datadir, `relbench run --resume --out DIR` of that run makes it again)",
            datadir.display()
        ),
    }
}

/// A datadir path that is a link or a file is refused.
fn kind_of_path(datadir: &Path, what: &str) -> anyhow::Result<()> {
    let Ok(m) = fs::symlink_metadata(datadir) else {
        return Ok(());
    };
    if m.file_type().is_symlink() {
        bail!(
            "{what} {} is a symbolic link; relbench does not follow it into a directory it did not create: \
             name the real directory",
            datadir.display()
        );
    }
    if !m.is_dir() {
        bail!(
            "{what} {} is a file, not a directory; name a new or empty directory",
            datadir.display()
        );
    }
    Ok(())
}

/// What an existing datadir holds, as far as relbench's marker goes.
enum Seen {
    Empty,
    /// relbench's marker, naming this directory.
    Marked,
    /// Files, and no marker.
    Unmarked,
}

fn inspect(datadir: &Path, owners: &[u32], what: &str) -> anyhow::Result<Seen> {
    use std::os::unix::fs::MetadataExt;
    let mut entries =
        fs::read_dir(datadir).with_context(|| format!("reading datadir {}", datadir.display()))?;
    if entries.next().is_none() {
        return Ok(Seen::Empty);
    }
    let here = identity(datadir)?;
    let marker = datadir.join(DATADIR_MARKER);
    match fs::symlink_metadata(&marker) {
        // Written by relbench (a marker an older relbench handed to the
        // server's user along with the datadir is that user's, who owns
        // the datadir anyway).
        Ok(m) if m.is_file() && owners.contains(&m.uid()) && m.mode() & 0o022 == 0 => {
            let text = fs::read_to_string(&marker).unwrap_or_default();
            // A marker from before relbench named the directory is trusted
            // by its owner alone.
            if text.lines().nth(1).map_or(true, |l| l == here) {
                return Ok(Seen::Marked);
            }
            bail!(
                "{what} {} holds a {DATADIR_MARKER} written for another directory ({}); it was copied or \
                 moved here, and relbench takes over nothing it did not make: point `datadir` at a new or \
                 empty directory",
                datadir.display(),
                text.lines().nth(1).unwrap_or_default()
            );
        }
        Ok(m) if m.is_file() || m.file_type().is_symlink() => bail!(
            "{what} {}'s {DATADIR_MARKER} was not written by relbench (owner uid {}, mode {:o}); relbench \
             takes over nothing it did not make: point `datadir` at a new or empty directory",
            datadir.display(),
            m.uid(),
            m.mode() & 0o7777
        ),
        _ => Ok(Seen::Unmarked),
    }
}

/// How old a private directory must be before another start may take it
/// for left over: one being set up right now is empty for a moment.
const STALE_AFTER: Duration = Duration::from_secs(60);

/// Removes the private directories (`relbench-XXXXXX` under the temporary
/// directory) that relbench runs killed without a chance to clean up
/// (SIGKILL, SIGQUIT) left: only ones owned by this user or the server's,
/// older than [`STALE_AFTER`], and holding no file a live process names.
pub(super) fn sweep_stale_run_dirs(owners: &[u32]) {
    use std::os::unix::fs::MetadataExt;
    let Ok(entries) = fs::read_dir(std::env::temp_dir()) else {
        return;
    };
    for e in entries.flatten() {
        let name = e.file_name();
        let Some(rest) = name.to_str().and_then(|n| n.strip_prefix("relbench-")) else {
            continue;
        };
        if rest.len() != 6 || !rest.chars().all(|c| c.is_ascii_alphanumeric()) {
            continue;
        }
        let Ok(m) = fs::symlink_metadata(e.path()) else {
            continue;
        };
        let old = m
            .modified()
            .ok()
            .and_then(|t| t.elapsed().ok())
            .is_some_and(|a| a > STALE_AFTER);
        if !m.is_dir() || !owners.contains(&m.uid()) || !old {
            continue;
        }
        // A server's pid file or socket lock names its process.
        let in_use = fs::read_dir(e.path()).map_or(true, |files| {
            files.flatten().any(|f| {
                let text = fs::read_to_string(f.path()).unwrap_or_default();
                let pid = text
                    .lines()
                    .next()
                    .and_then(|l| l.trim().parse::<i32>().ok());
                pid.is_some_and(|p| Path::new(&format!("/proc/{p}")).exists())
            })
        });
        if !in_use {
            let _ = fs::remove_dir_all(e.path());
        }
    }
}

/// The pid file of a target's server in its run's log directory.
pub(super) fn pid_file(spec: &ServerSpec) -> PathBuf {
    spec.log_dir.join(format!("{}.server.pid", spec.target))
}

/// A server an earlier relbench started for this target and did not stop
/// (it was killed): stopped now, before its datadir is used again. Only a
/// process whose command line names this datadir is touched.
pub(super) fn stop_stale(spec: &ServerSpec) -> Option<String> {
    let text = fs::read_to_string(pid_file(spec)).ok()?;
    let pid: i32 = text.trim().parse().ok()?;
    let cmdline = fs::read(format!("/proc/{pid}/cmdline")).ok()?;
    let datadir = spec.datadir.as_os_str().as_encoded_bytes();
    if !cmdline.windows(datadir.len()).any(|w| w == datadir) {
        return None;
    }
    // SAFETY: a signal to the server an earlier relbench started on this
    // datadir, checked above by its command line.
    unsafe {
        libc::kill(pid, libc::SIGTERM);
    }
    // Gone once it has exited: a zombie (not reaped by its parent yet)
    // holds nothing any more.
    let running = || {
        fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|st| {
            st.rsplit_once(") ")
                .is_some_and(|(_, rest)| !rest.starts_with('Z'))
        })
    };
    let wait = |limit: Duration| {
        let t0 = Instant::now();
        while running() && t0.elapsed() < limit {
            std::thread::sleep(Duration::from_millis(50));
        }
    };
    wait(Duration::from_secs(60));
    // A MariaDB that was still starting when its relbench was killed
    // holds SIGTERM back and never takes it up (one ran on for good,
    // SIGTERM pending): ended, as the server this datadir's run started.
    let still_it = || {
        fs::read(format!("/proc/{pid}/cmdline"))
            .is_ok_and(|c| c.windows(datadir.len()).any(|w| w == datadir))
    };
    let killed = running() && still_it();
    if killed {
        // SAFETY: the same process, its command line checked again.
        unsafe {
            libc::kill(pid, libc::SIGKILL);
        }
        wait(Duration::from_secs(5));
    }
    Some(format!(
        "target \"{}\": {} server {pid}, which an earlier relbench started on {} and did not stop",
        spec.target,
        if killed {
            "killed (it did not stop within 60 s of SIGTERM)"
        } else {
            "stopped"
        },
        spec.datadir.display()
    ))
}

/// The first directory above `path` that `uid`/`gid` cannot pass through,
/// if any.
fn unpassable(path: &Path, uid: u32, gid: u32) -> Option<PathBuf> {
    use std::os::unix::fs::MetadataExt;
    path.ancestors().skip(1).find_map(|dir| {
        let m = fs::metadata(dir).ok()?;
        let mode = m.mode();
        let ok = if m.uid() == uid {
            mode & 0o100 != 0
        } else if m.gid() == gid {
            mode & 0o010 != 0
        } else {
            mode & 0o001 != 0
        };
        (!ok).then(|| dir.to_path_buf())
    })
}

/// Checks that every directory above `path` lets `user` through, since the
/// server runs as that user (a temporary directory is often root's alone).
pub(super) fn reachable_by(
    path: &Path,
    uid: u32,
    gid: u32,
    user: &str,
    target: &str,
) -> anyhow::Result<()> {
    if let Some(dir) = unpassable(path, uid, gid) {
        bail!(
            "target \"{target}\": the server runs as {user}, who cannot reach {}: {} is not searchable by it; \
             set `datadir` somewhere {user} can reach, or `chmod o+x {}`",
            path.display(),
            dir.display(),
            dir.display()
        );
    }
    Ok(())
}

/// Where relbench puts a datadir the plan does not name: `<root>/<target>`
/// (`root` is `<results>/data`, or `--data-dir`), unless the server's OS user cannot reach it (a clone in
/// root's 0700 home is the usual case), then a directory of the run's own
/// under `/var/tmp`, named after the results directory's device and inode
/// so that `--resume` finds it again. The second value says why it moved.
pub fn chosen_datadir(
    out: &Path,
    root: &Path,
    target: &str,
    user: Option<&str>,
) -> (PathBuf, Option<String>) {
    use std::os::unix::fs::MetadataExt;
    let default = root.join(target);
    let moved = || {
        let (uid, gid) = super::lookup_user(user?).ok()?;
        let blocked = unpassable(&default, uid, gid)?;
        let m = fs::metadata(out).ok()?;
        let place = Path::new(MOVED_ROOT)
            .join(format!("{MOVED_PREFIX}{}.{}", m.dev(), m.ino()))
            .join(target);
        unpassable(&place, uid, gid).is_none().then(|| {
            let why = format!(
                "target \"{target}\": the server runs as {}, who cannot pass {}, so its datadir is {} \
                 (removed when the target is done; set `datadir` to choose another place)",
                user.unwrap_or_default(),
                blocked.display(),
                place.display()
            );
            (place, Some(why))
        })
    };
    moved().unwrap_or((default, None))
}

const MOVED_ROOT: &str = "/var/tmp";
const MOVED_PREFIX: &str = "relbench-data-";

/// The run's own directory under `/var/tmp` that holds `datadir`, when
/// it is a moved one.
fn moved_parent(datadir: &Path) -> Option<&Path> {
    let parent = datadir.parent()?;
    (parent.parent() == Some(Path::new(MOVED_ROOT))
        && parent
            .file_name()
            .is_some_and(|n| n.to_string_lossy().starts_with(MOVED_PREFIX)))
    .then_some(parent)
}

/// Makes the run's own directory under `/var/tmp` with one `mkdir`, or
/// accepts the one there only when this user made it: its name is
/// predictable (`--resume` finds it again by the results directory), so
/// another user may have made it first to rename the datadir inside it
/// (regression: a parent pre-made by `nobody`, mode 0755, was accepted,
/// and a link swapped in during install ran root's server on nobody's
/// datadir). Never a link.
fn claim_moved_parent(parent: &Path, what: &str) -> anyhow::Result<()> {
    use std::os::unix::fs::{DirBuilderExt, MetadataExt};
    match fs::DirBuilder::new().mode(0o755).create(parent) {
        Ok(()) => return Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
        Err(e) => return Err(e).with_context(|| format!("{what}: creating {}", parent.display())),
    }
    let m =
        fs::symlink_metadata(parent).with_context(|| format!("reading {}", parent.display()))?;
    let me = crate::util::my_uid();
    if !m.is_dir() || m.uid() != me || m.mode() & 0o022 != 0 {
        bail!(
            "{what}: {} was not made by relbench as uid {me} ({}, uid {}, mode {:o}): another user may have \
             made it to take the datadir over; look at what it is, remove it, and run again, or set \
             `datadir` for the target",
            parent.display(),
            if m.file_type().is_symlink() {
                "a symbolic link"
            } else if m.is_dir() {
                "a directory"
            } else {
                "not a directory"
            },
            m.uid(),
            m.mode() & 0o7777
        );
    }
    Ok(())
}

/// The run's own directory under `/var/tmp` that held a moved datadir,
/// removed once empty.
pub(super) fn remove_moved_parent(datadir: &Path) {
    if let Some(parent) = moved_parent(datadir) {
        // Fails, harmlessly, while another target's datadir is in it.
        let _ = fs::remove_dir(parent);
    }
}
