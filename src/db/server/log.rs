//! A server's log, read back: its last lines and the lines that say why
//! it stopped.

use super::*;

/// The last `lines` lines of a log file.
/// What a server's log says about why this start failed: its error lines
/// since relbench's last start marker, or its last `lines` lines when none
/// reads as an error.
pub fn tail(path: &Path, lines: usize) -> String {
    let Ok(mut f) = fs::File::open(path) else {
        return format!("(no log at {})", path.display());
    };
    let len = f.metadata().map_or(0, |m| m.len());
    let _ = f.seek(SeekFrom::Start(len.saturating_sub(16 * 1024)));
    let mut s = String::new();
    let _ = f.read_to_string(&mut s);
    let this_start = s.rfind("----- relbench (pid ").map_or(&s[..], |i| &s[i..]);
    why(this_start, lines)
}

/// The lines of a server's or install script's output that say why it
/// failed. An install script prints thirty lines of generic advice around
/// the one that matters ("unknown option '--skip-test-db'", "[ERROR]
/// Fatal error: ..."), so those lines come first, then the last few for
/// context; all of the output when it is short.
pub fn why(output: &str, lines: usize) -> String {
    let all: Vec<&str> = output.lines().filter(|l| !l.trim().is_empty()).collect();
    if all.len() <= lines {
        return all.join("\n");
    }
    let says_why = |l: &&str| {
        let l = l.to_ascii_lowercase();
        [
            "[error]",
            "error:",
            "fatal",
            "unknown option",
            "unknown variable",
            "can't ",
            "cannot ",
            "could not",
            "failed",
            "panic",
        ]
        .iter()
        .any(|w| l.contains(w))
    };
    let errors: Vec<&str> = all.iter().copied().filter(says_why).take(lines).collect();
    if errors.is_empty() {
        return all[all.len() - lines..].join("\n");
    }
    let context = &all[all.len() - 3..];
    let mut out = errors.join("\n");
    let rest: Vec<&str> = context
        .iter()
        .copied()
        .filter(|l| !errors.contains(l))
        .collect();
    if !rest.is_empty() {
        out += "\n...\n";
        out += &rest.join("\n");
    }
    out
}
