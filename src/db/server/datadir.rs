//! A managed server's directories: private ones relbench makes, the
//! datadir's state (ours, empty, or someone else's), the pid file of a
//! server an earlier run left, and whether the server's user can reach
//! its files.

use super::*;

/// Gives a tree relbench made to the server's user. Symbolic links are
/// changed themselves, never followed: a link planted in a datadir cannot
/// hand anything outside it to the server.
pub(super) fn chown_tree(path: &Path, uid: u32, gid: u32) -> anyhow::Result<()> {
    std::os::unix::fs::lchown(path, Some(uid), Some(gid))
        .with_context(|| format!("giving {} to uid {uid}", path.display()))?;
    if fs::symlink_metadata(path)?.is_dir() {
        for e in fs::read_dir(path)? {
            chown_tree(&e?.path(), uid, gid)?;
        }
    }
    Ok(())
}

/// A new private directory with a random name (`mkdtemp`, mode 0700): no
/// one can have made it first, or point it somewhere else.
pub(super) fn private_dir(prefix: &str) -> anyhow::Result<PathBuf> {
    let template = std::env::temp_dir().join(format!("{prefix}XXXXXX"));
    let mut bytes =
        std::ffi::CString::new(template.as_os_str().as_encoded_bytes())?.into_bytes_with_nul();
    // SAFETY: mkdtemp rewrites the trailing XXXXXX of the NUL-terminated
    // buffer in place and returns it, or null.
    let p = unsafe { libc::mkdtemp(bytes.as_mut_ptr().cast()) };
    if p.is_null() {
        return Err(std::io::Error::last_os_error())
            .with_context(|| format!("creating a private directory {}", template.display()));
    }
    bytes.pop();
    Ok(PathBuf::from(std::ffi::OsString::from_vec(bytes)))
}

/// What relbench may do with a datadir: initialise it (it is new or
/// empty), or start it (relbench initialised it before). Anything else is
/// someone else's and is refused, untouched.
pub(super) fn datadir_state(datadir: &Path, target: &str) -> anyhow::Result<bool> {
    match fs::symlink_metadata(datadir) {
        Err(_) => Ok(true),
        Ok(m) if m.file_type().is_symlink() => bail!(
            "target \"{target}\": datadir {} is a symbolic link; relbench does not follow it into a directory \
             it did not create: name the real directory",
            datadir.display()
        ),
        Ok(m) if !m.is_dir() => bail!(
            "target \"{target}\": datadir {} is a file, not a directory; name a new or empty directory",
            datadir.display()
        ),
        Ok(_) => {
            let mut entries = fs::read_dir(datadir)
                .with_context(|| format!("reading datadir {}", datadir.display()))?;
            if entries.next().is_none() {
                return Ok(true);
            }
            if datadir.join(DATADIR_MARKER).is_file() {
                return Ok(false);
            }
            bail!(
                "target \"{target}\": datadir {} is not empty and relbench did not create it (it has no {DATADIR_MARKER}); \
                 relbench takes over nothing it did not make: point `datadir` at a new or empty directory",
                datadir.display()
            )
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
    let t0 = Instant::now();
    while running() && t0.elapsed() < Duration::from_secs(60) {
        std::thread::sleep(Duration::from_millis(50));
    }
    Some(format!(
        "target \"{}\": stopped server {pid}, which an earlier relbench started on {} and did not stop",
        spec.target,
        spec.datadir.display()
    ))
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
