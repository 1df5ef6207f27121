//! Small helpers shared by several modules.

use std::fs;
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

use anyhow::{bail, Context};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

/// The closest of `candidates` to `word`, if it is close enough to be a
/// likely typo (edit distance at most a third of the word, and at least 1).
pub fn did_you_mean<'a>(
    word: &str,
    candidates: impl IntoIterator<Item = &'a str>,
) -> Option<&'a str> {
    let limit = (word.chars().count() / 3).max(1);
    candidates
        .into_iter()
        .map(|c| (edit_distance(word, c), c))
        .filter(|(d, _)| *d <= limit)
        .min_by_key(|(d, _)| *d)
        .map(|(_, c)| c)
}

/// Edit distance counting a swap of two neighbours as one edit (optimal
/// string alignment), since swapped letters are the commonest typo.
fn edit_distance(a: &str, b: &str) -> usize {
    let (a, b): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
    let mut d = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for (i, row) in d.iter_mut().enumerate() {
        row[0] = i;
    }
    for (j, cell) in d[0].iter_mut().enumerate() {
        *cell = j;
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            d[i][j] = (d[i - 1][j] + 1)
                .min(d[i][j - 1] + 1)
                .min(d[i - 1][j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                d[i][j] = d[i][j].min(d[i - 2][j - 2] + 1);
            }
        }
    }
    d[a.len()][b.len()]
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
    let secs = unix as i64;
    let (days, rem) = (secs.div_euclid(86400), secs.rem_euclid(86400));
    let (y, m, d) = civil_from_days(days);
    format!(
        "{y:04}{m:02}{d:02}T{:02}{:02}{:02}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

/// ISO 8601 UTC time, for files people read.
pub fn utc_iso(unix: f64) -> String {
    let s = utc_stamp(unix);
    format!(
        "{}-{}-{}T{}:{}:{}Z",
        &s[0..4],
        &s[4..6],
        &s[6..8],
        &s[9..11],
        &s[11..13],
        &s[13..15]
    )
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
        anyhow::anyhow!("writing {}: {e}{hint}", path.display())
    })
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stamps_are_utc_calendar_times() {
        assert_eq!(utc_stamp(0.0), "19700101T000000Z");
        assert_eq!(utc_stamp(1_795_305_600.0 + 3661.0), "20261122T010101Z");
        assert_eq!(utc_iso(951_782_400.0), "2000-02-29T00:00:00Z");
    }

    #[test]
    fn typos_find_their_word() {
        let words = ["point-query", "scan", "update-index"];
        assert_eq!(did_you_mean("point-qeury", words), Some("point-query"));
        assert_eq!(did_you_mean("scna", words), Some("scan"));
        assert_eq!(did_you_mean("zzzzzz", words), None);
    }
}
