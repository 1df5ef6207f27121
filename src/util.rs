//! Small helpers shared by several modules.

use std::fs;
use std::io::Write;
use std::os::unix::ffi::OsStringExt;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

/// Set by the Ctrl-C handler; every loop that can take long checks it.
pub static INTERRUPT: AtomicBool = AtomicBool::new(false);

/// The closest of `candidates` to `word`, if it is close enough to be a
/// likely typo (edit distance at most a third of the word, and at least 1).
pub fn did_you_mean<'a>(
    word: &str,
    candidates: impl IntoIterator<Item = &'a str>,
) -> Option<&'a str> {
    let limit = (word.chars().count() / 3).max(1);
    candidates
        .into_iter()
        // A swap of two neighbours counts as one edit (optimal string
        // alignment): swapped letters are the commonest typo.
        .map(|c| (strsim::osa_distance(word, c), c))
        .filter(|(d, _)| *d <= limit)
        .min_by_key(|(d, _)| *d)
        .map(|(_, c)| c)
}

/// Seconds since the Unix epoch.
pub fn unix_now() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64())
}

/// A UTC timestamp `YYYYMMDDTHHMMSSZ` for a Unix time, as used in the names
/// of results directories.
pub fn utc_stamp(unix: f64) -> String {
    format!(
        "{}Z",
        utc_datetime(unix)
            .replace(['-', ':'], "")
            .replacen(' ', "T", 1)
    )
}

/// `YYYY-MM-DD HH:MM:SS` in UTC: a DATETIME literal, as the Insert
/// Benchmark's client stamps its rows.
pub fn utc_datetime(unix: f64) -> String {
    let secs = unix as i64;
    let (days, rem) = (secs.div_euclid(86400), secs.rem_euclid(86400));
    let (y, m, d) = civil_from_days(days);
    format!(
        "{y:04}-{m:02}-{d:02} {:02}:{:02}:{:02}",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

/// ISO 8601 UTC time, for files people read.
pub fn utc_iso(unix: f64) -> String {
    format!("{}Z", utc_datetime(unix).replacen(' ', "T", 1))
}

/// Howard Hinnant's days-to-civil algorithm.
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (if m <= 2 { y + 1 } else { y }, m, d)
}

/// Set once stdout or stderr could not be written (a closed pipe, as in
/// `relbench list | head -1`, a full disk, a lost terminal): later output
/// to it is dropped instead of failing, and the work goes on.
static STDOUT_GONE: AtomicBool = AtomicBool::new(false);
static STDERR_GONE: AtomicBool = AtomicBool::new(false);

fn emit(mut w: impl Write, gone: &AtomicBool, s: &str) {
    if gone.load(Ordering::Relaxed) {
        return;
    }
    if w.write_all(s.as_bytes()).and_then(|()| w.flush()).is_err() {
        gone.store(true, Ordering::Relaxed);
    }
}

/// Writes to stdout. A reader that went away ends the output, as ripgrep
/// does: no panic, no error, exit status as if it had been read.
pub fn out(s: &str) {
    emit(std::io::stdout().lock(), &STDOUT_GONE, s);
}

/// Writes to stderr, with the same tolerance as [`out`].
pub fn err(s: &str) {
    emit(std::io::stderr().lock(), &STDERR_GONE, s);
}

/// `println!` that tolerates a closed stdout ([`out`]).
#[macro_export]
macro_rules! outln {
    () => { $crate::util::out("\n") };
    ($($t:tt)*) => { $crate::util::out(&format!("{}\n", format_args!($($t)*))) };
}

/// `print!` that tolerates a closed stdout.
#[macro_export]
macro_rules! out {
    ($($t:tt)*) => { $crate::util::out(&format!($($t)*)) };
}

/// `eprintln!` that tolerates a closed stderr ([`err`]).
#[macro_export]
macro_rules! errln {
    () => { $crate::util::err("\n") };
    ($($t:tt)*) => { $crate::util::err(&format!("{}\n", format_args!($($t)*))) };
}

/// `eprint!` that tolerates a closed stderr.
#[macro_export]
macro_rules! err {
    ($($t:tt)*) => { $crate::util::err(&format!($($t)*)) };
}

/// Writes `body` to `path` whole or not at all, following no symbolic
/// link: it goes to a temporary file beside it, created exclusively and
/// never through a link (`O_EXCL | O_NOFOLLOW`), synced, then renamed over
/// `path` (a link planted at `path` is replaced, its target untouched).
pub fn write_file(path: &Path, body: &[u8]) -> anyhow::Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("out");
    let tmp = dir.join(format!(".{name}.tmp"));
    // A temporary left by a killed run, or planted: removed (a link itself,
    // not what it points to).
    let _ = fs::remove_file(&tmp);
    let res = (|| -> std::io::Result<()> {
        let mut f = fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .custom_flags(libc::O_NOFOLLOW)
            .mode(0o644)
            .open(&tmp)?;
        f.write_all(body)?;
        f.sync_all()?;
        fs::rename(&tmp, path)
    })();
    res.map_err(|e| {
        let _ = fs::remove_file(&tmp);
        let hint = if e.raw_os_error() == Some(28) {
            " (the disk is full: free space and run again with --resume; nothing written before is lost)"
        } else {
            ""
        };
        anyhow::Error::new(e).context(format!("writing {}{hint}", path.display()))
    })
}

/// A new private directory with a random name (`mkdtemp`, mode 0700): no
/// one can have made it first, or point it somewhere else.
pub fn private_dir(prefix: &str) -> anyhow::Result<PathBuf> {
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

/// Whether an error comes from a full disk (`ENOSPC`) or quota.
pub fn disk_full(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        c.downcast_ref::<std::io::Error>()
            .is_some_and(|io| matches!(io.raw_os_error(), Some(28) | Some(122)))
    })
}

/// Text from a plan or a file as a message may show it: control
/// characters (a terminal's escape sequences) escaped, and at most
/// `max` characters, the rest said in a count.
pub fn printable(s: &str, max: usize) -> String {
    let mut out = String::new();
    for (n, c) in s.chars().enumerate() {
        if n == max {
            out += &format!("… ({} more bytes)", s.len() - out.len());
            break;
        }
        if c.is_control() && c != '\n' {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    out
}

/// The most bytes a results file relbench reads back may hold (a step
/// file with a day of per-second series and its histograms is a few MB).
pub const MAX_RECORD_BYTES: u64 = 64 << 20;

/// Reads a file relbench wrote earlier and now reads back (a step file,
/// `run.json`, a profile, `adaptive.json`, a merge's record): a regular
/// file only (a FIFO would block, a device never end, a link point
/// anywhere), opened without following a link and without blocking, and
/// at most `max` bytes (a larger one is refused, not read).
pub fn read_record(path: &Path, max: u64) -> anyhow::Result<Vec<u8>> {
    use std::io::Read;
    use std::os::unix::fs::OpenOptionsExt;
    let f = fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path)
        .with_context(|| format!("reading {}", path.display()))?;
    let m = f
        .metadata()
        .with_context(|| format!("reading {}", path.display()))?;
    if !m.is_file() {
        bail!(
            "{} is not a regular file; relbench wrote none like it",
            path.display()
        );
    }
    if m.len() > max {
        bail!(
            "{} holds {} bytes, more than the {} a file relbench writes there can; it was not read",
            path.display(),
            m.len(),
            max
        );
    }
    let mut out = Vec::with_capacity(m.len() as usize);
    f.take(max + 1)
        .read_to_end(&mut out)
        .with_context(|| format!("reading {}", path.display()))?;
    if out.len() as u64 > max {
        bail!(
            "{} grew past {max} bytes while it was read; it was not read",
            path.display()
        );
    }
    Ok(out)
}

/// Refuses a directory of results (or one inside it) that is a symbolic
/// link: files written through it would land wherever it points.
pub fn refuse_link(path: &Path) -> anyhow::Result<()> {
    if fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink()) {
        bail!(
            "{} is a symbolic link; relbench writes results only into real directories: \
             name the directory it points to, or another one",
            path.display()
        );
    }
    Ok(())
}

/// Who may own a directory relbench writes into: this process's user, and
/// for a managed server's datadir also the server's OS user.
pub fn my_uid() -> u32 {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() }
}

/// Makes `dir` (each missing component with `mkdir`, never through a link)
/// or checks the one that is there, so that no other user can change what
/// relbench writes into it: the directory must be a real directory owned by
/// one of `owners`, with no write bit for group or others, and so must
/// every directory above it be unwritable by group and others, up to one
/// with the sticky bit (like /tmp) or the root. A directory someone else
/// made or can write is refused with what to do; nothing is changed in it.
pub fn secure_dir(dir: &Path, owners: &[u32], what: &str) -> anyhow::Result<()> {
    secure(dir, owners, what, true)
}

/// [`secure_dir`]'s checks alone, for `relbench check`: nothing is made.
pub fn check_dir(dir: &Path, owners: &[u32], what: &str) -> anyhow::Result<()> {
    secure(dir, owners, what, false)
}

fn secure(dir: &Path, owners: &[u32], what: &str, create: bool) -> anyhow::Result<()> {
    use std::os::unix::fs::{DirBuilderExt, MetadataExt};
    let abs = std::path::absolute(dir).with_context(|| format!("{what} {}", dir.display()))?;
    // The part that exists, and what is left to make.
    let mut existing = abs.clone();
    let mut missing = Vec::new();
    while fs::symlink_metadata(&existing).is_err() {
        let Some(name) = existing.file_name() else {
            break;
        };
        missing.push(name.to_os_string());
        existing.pop();
    }
    missing.reverse();
    let ours = |uid: u32| owners.contains(&uid);
    // A link on the way is followed only when a user we trust made it.
    for a in existing.ancestors() {
        if let Ok(m) = fs::symlink_metadata(a) {
            if m.file_type().is_symlink() && m.uid() != 0 && !ours(m.uid()) {
                bail!(
                    "{what} {}: {} is a symbolic link another user (uid {}) owns, so that user chooses where \
                     relbench's files go; name a path without it",
                    dir.display(),
                    a.display(),
                    m.uid()
                );
            }
        }
    }
    let real = fs::canonicalize(&existing)
        .with_context(|| format!("{what} {}: resolving {}", dir.display(), existing.display()))?;
    let check = |p: &Path, last: bool| -> anyhow::Result<()> {
        let m = fs::symlink_metadata(p).with_context(|| format!("reading {}", p.display()))?;
        if last {
            if !m.is_dir() {
                bail!(
                    "{what} {} is not a directory; name a new directory, or one relbench made",
                    dir.display()
                );
            }
            if !ours(m.uid()) {
                bail!(
                    "{what} {} belongs to another user (uid {}), who could change what relbench writes there; \
                     name a new directory, or one you made",
                    dir.display(),
                    m.uid()
                );
            }
        }
        if m.mode() & 0o022 != 0 && (last || m.mode() & 0o1000 == 0) {
            bail!(
                "{what} {}: {} can be written by {} (mode {:o}), who could swap what relbench writes there; \
                 `chmod go-w {}`, or name a directory under one only you can write",
                dir.display(),
                p.display(),
                if m.mode() & 0o002 != 0 { "every user" } else { "its group" },
                m.mode() & 0o7777,
                p.display()
            );
        }
        Ok(())
    };
    if missing.is_empty() {
        check(&real, true)?;
    }
    for a in real.ancestors().skip(usize::from(missing.is_empty())) {
        let m = fs::metadata(a).with_context(|| format!("reading {}", a.display()))?;
        let sticky = m.mode() & 0o1000 != 0;
        check(a, false)?;
        if sticky {
            break;
        }
        // Below the first sticky directory, every one on the way is root's
        // or ours: its owner could rename what is in it, and swap the
        // directory relbench writes into for one of links.
        if m.uid() != 0 && !ours(m.uid()) {
            bail!(
                "{what} {}: {} belongs to another user (uid {}), who could rename what is in it and swap \
                 the directory relbench writes into; name a directory under one only you (or root) own",
                dir.display(),
                a.display(),
                m.uid()
            );
        }
    }
    let mut p = real;
    for name in missing.into_iter().filter(|_| create) {
        p.push(name);
        match fs::DirBuilder::new().mode(0o755).create(&p) {
            Ok(()) => {}
            // Made meanwhile (by another relbench, or a race): checked below.
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
            Err(e) => {
                return Err(e).with_context(|| format!("{what}: creating {}", p.display()));
            }
        }
        check(&p, true)?;
    }
    Ok(())
}

/// Refuses a file relbench would execute or preload (a basedir's
/// binaries and scripts, a malloc library, a hook's interpreter), or a
/// directory it takes such files from, unless no other user can change
/// it: it, and every directory above its real path, owned by root or
/// this user and not writable by group or others (a sticky directory
/// such as /tmp excepted above it: others cannot rename what is in it),
/// and every symbolic link on the way as it was named owned by root or
/// this user. Otherwise another local user would run code as whoever
/// runs relbench (as root, a root shell). Reads metadata only.
pub fn trusted(path: &Path, what: &str) -> anyhow::Result<()> {
    use std::os::unix::fs::MetadataExt;
    let me = my_uid();
    let ours = |uid: u32| uid == 0 || uid == me;
    let abs = std::path::absolute(path).with_context(|| format!("{what} {}", path.display()))?;
    for a in abs.ancestors() {
        if let Ok(m) = fs::symlink_metadata(a) {
            if m.file_type().is_symlink() && !ours(m.uid()) {
                bail!(
                    "{what} {}: {} is a symbolic link another user (uid {}) owns, who could point it at \
                     code of their own that relbench would run; name the real path",
                    path.display(),
                    a.display(),
                    m.uid()
                );
            }
        }
    }
    let real = fs::canonicalize(&abs).with_context(|| format!("{what} {}", path.display()))?;
    for (i, a) in real.ancestors().enumerate() {
        let m = fs::metadata(a).with_context(|| format!("reading {}", a.display()))?;
        let first = i == 0;
        if !ours(m.uid()) {
            bail!(
                "{what} {}: {} belongs to another user (uid {}), who could replace what relbench runs \
                 as uid {me}; `chown -R root` it, or use a copy only you and root can write",
                path.display(),
                a.display(),
                m.uid()
            );
        }
        let sticky = !first && m.mode() & 0o1000 != 0;
        if m.mode() & 0o022 != 0 && !sticky {
            bail!(
                "{what} {}: {} can be written by {} (mode {:o}), who could replace what relbench runs; \
                 `chmod go-w {}`",
                path.display(),
                a.display(),
                if m.mode() & 0o002 != 0 { "every user" } else { "its group" },
                m.mode() & 0o7777,
                a.display()
            );
        }
    }
    Ok(())
}

/// The first 8 bytes of the SHA-256 of `text`, as hex: a short identity
/// that is the same on every host (a plan's, a history's run, series and
/// host).
pub fn short_hash(text: &str) -> String {
    use sha2::{Digest, Sha256};
    Sha256::digest(text.as_bytes())
        .iter()
        .take(8)
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// `f` over `items` on every core (scoped threads, each a run of items),
/// the results in the order given.
pub fn par_map<T: Sync, R: Send>(items: &[T], f: impl Fn(&T) -> R + Sync) -> Vec<R> {
    let threads = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(items.len().div_ceil(64))
        .max(1);
    let chunk = items.len().div_ceil(threads).max(1);
    let f = &f;
    std::thread::scope(|scope| {
        let parts: Vec<_> = items
            .chunks(chunk)
            .map(|part| scope.spawn(move || part.iter().map(f).collect::<Vec<_>>()))
            .collect();
        parts
            .into_iter()
            .flat_map(|h| h.join().expect("a worker thread panicked"))
            .collect()
    })
}

/// A directory tree of `(path, text)` files, for tests of readers of
/// `/proc`, `/sys` and the cgroup filesystem.
#[cfg(test)]
pub(crate) fn test_tree(files: &[(&str, &str)]) -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    for (p, text) in files {
        let p = d.path().join(p);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }
    d
}

/// A seed no earlier run had: the clock's nanoseconds and the process id,
/// mixed (SplitMix64's finaliser), kept below 2⁶³ so a plan can say it.
pub fn fresh_seed() -> u64 {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64);
    let mut z = nanos ^ (u64::from(std::process::id()) << 32);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    (z ^ (z >> 31)) >> 1
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stamps_are_utc_calendar_times() {
        assert_eq!(utc_stamp(0.0), "19700101T000000Z");
        assert_eq!(utc_stamp(1_795_305_600.0 + 3661.0), "20261122T010101Z");
        assert_eq!(utc_iso(951_782_400.0), "2000-02-29T00:00:00Z");
    }

    /// Regression: a FIFO in place of a step file hung `report`, and a
    /// file of any size was read whole.
    #[test]
    fn a_record_is_a_bounded_regular_file_never_a_fifo_or_a_link() {
        let d = tempfile::tempdir().unwrap();
        let f = d.path().join("r.json");
        std::fs::write(&f, b"{}").unwrap();
        assert_eq!(read_record(&f, 10).unwrap(), b"{}");
        assert!(format!("{:#}", read_record(&f, 1).unwrap_err()).contains("more than"));
        let fifo = d.path().join("fifo");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: a path this test made, a mode.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        assert!(format!("{:#}", read_record(&fifo, 10).unwrap_err()).contains("not a regular file"));
        let link = d.path().join("link");
        std::os::unix::fs::symlink(&f, &link).unwrap();
        assert!(read_record(&link, 10).is_err());
    }

    #[test]
    fn typos_find_their_word() {
        let words = ["point-query", "scan", "update-index"];
        assert_eq!(did_you_mean("point-qeury", words), Some("point-query"));
        assert_eq!(did_you_mean("scna", words), Some("scan"));
        assert_eq!(did_you_mean("zzzzzz", words), None);
    }
}
