//! Reading the crate's own source, for the tests that hold it to rules
//! (tests/architecture.rs: the layers and function lengths;
//! tests/errors.rs: the `Result<_, String>` left): its files, and each
//! file's text with comments, literals and test items blanked, line
//! numbers kept. One reader, so a rule cannot read less than another
//! (regression: a reader that stopped at an early `mod tests;`).
#![allow(dead_code)] // each binary uses its part

use std::fs;
use std::path::{Path, PathBuf};

pub fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// The text with its comments blanked, and with its string and character
/// literals too when `strings`: every byte of them a space, newlines
/// kept, so that offsets and line numbers are the original's and braces
/// can be counted.
pub fn blanked(text: &str, strings: bool) -> String {
    let b = text.as_bytes();
    let mut out = b.to_vec();
    let blank = |out: &mut Vec<u8>, from: usize, to: usize| {
        for c in &mut out[from..to.min(b.len())] {
            if *c != b'\n' {
                *c = b' ';
            }
        }
    };
    let ident = |i: usize| i > 0 && (b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_');
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'/' if b.get(i + 1) == Some(&b'/') => {
                let end = text[i..].find('\n').map_or(b.len(), |n| i + n);
                blank(&mut out, i, end);
                i = end;
            }
            b'/' if b.get(i + 1) == Some(&b'*') => {
                let (mut depth, mut j) = (1, i + 2);
                while j < b.len() && depth > 0 {
                    if b[j..].starts_with(b"/*") {
                        depth += 1;
                        j += 2;
                    } else if b[j..].starts_with(b"*/") {
                        depth -= 1;
                        j += 2;
                    } else {
                        j += 1;
                    }
                }
                blank(&mut out, i, j);
                i = j;
            }
            b'r' if !ident(i) && matches!(b.get(i + 1), Some(b'"' | b'#')) => {
                let hashes = b[i + 1..].iter().take_while(|&&c| c == b'#').count();
                if b.get(i + 1 + hashes) != Some(&b'"') {
                    i += 1;
                    continue;
                }
                let mut close = vec![b'"'];
                close.resize(1 + hashes, b'#');
                let from = i + 2 + hashes;
                let end = b[from..]
                    .windows(close.len())
                    .position(|w| w == close.as_slice())
                    .map_or(b.len(), |n| from + n);
                if strings {
                    blank(&mut out, from, end);
                }
                i = end + close.len();
            }
            b'"' => {
                let mut j = i + 1;
                while j < b.len() && b[j] != b'"' {
                    j += if b[j] == b'\\' { 2 } else { 1 };
                }
                if strings {
                    blank(&mut out, i + 1, j);
                }
                i = j + 1;
            }
            b'\'' => {
                // A character literal ('{', '\'', 'é'), or a lifetime.
                let end = if b.get(i + 1) == Some(&b'\\') {
                    b[i + 3..]
                        .iter()
                        .position(|&c| c == b'\'')
                        .map(|n| i + 3 + n)
                } else {
                    text[i + 1..]
                        .chars()
                        .next()
                        .map(|c| i + 1 + c.len_utf8())
                        .filter(|&e| b.get(e) == Some(&b'\''))
                };
                match end {
                    Some(e) => {
                        if strings {
                            blank(&mut out, i + 1, e);
                        }
                        i = e + 1;
                    }
                    None => i += 1,
                }
            }
            _ => i += 1,
        }
    }
    String::from_utf8(out).expect("whole characters blanked")
}

/// Where an item begins and ends (`a..b` of the text), given the offset
/// just past its attributes: to its `;` when that comes before any brace
/// (`mod tests;`), else to its closing brace. `text` is blanked.
pub fn item_end(text: &str, from: usize) -> usize {
    let b = text.as_bytes();
    // The first `;` or `{` outside parentheses and brackets (`[u8; 4]`
    // in a signature ends nothing).
    let mut nest = 0i32;
    let first = b.iter().enumerate().skip(from).find(|&(_, &c)| {
        match c {
            b'(' | b'[' => nest += 1,
            b')' | b']' => nest -= 1,
            _ => {}
        }
        nest == 0 && (c == b';' || c == b'{')
    });
    match first {
        Some((s, b';')) => s + 1,
        Some((o, _)) => {
            let mut depth = 0;
            for (j, &c) in b.iter().enumerate().skip(o) {
                match c {
                    b'{' => depth += 1,
                    b'}' => {
                        depth -= 1;
                        if depth == 0 {
                            return j + 1;
                        }
                    }
                    _ => {}
                }
            }
            b.len()
        }
        None => b.len(),
    }
}

/// The spans of the items marked `#[cfg(test)]`: a test module, inline
/// or out of line, or a helper only tests use.
pub fn test_items(blank: &str) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut at = 0;
    while let Some(n) = blank[at..].find("#[cfg(test)]") {
        let start = at + n;
        let end = item_end(blank, start + "#[cfg(test)]".len());
        out.push((start, end));
        at = end;
    }
    out
}

/// The code of a file without its comments and its test items (read to
/// the end: what follows an early `mod tests;` is code too). String
/// literals are kept, for the rules that look for names in them.
pub fn code(text: &str) -> String {
    let kept = blanked(text, false);
    let mut out = String::new();
    let mut at = 0;
    for (a, b) in test_items(&blanked(text, true)) {
        out.push_str(&kept[at..a]);
        at = b;
    }
    out.push_str(&kept[at..]);
    out
}

/// The text blanked (comments and literals) with its test items blanked
/// too: what the function rules read.
pub fn non_test(text: &str) -> String {
    let mut blank = blanked(text, true);
    for (a, b) in test_items(&blank) {
        let cut: String = blank[a..b]
            .chars()
            .map(|c| if c == '\n' { c } else { ' ' })
            .collect();
        blank.replace_range(a..b, &cut);
    }
    blank
}
