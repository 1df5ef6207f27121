//! Checking a plan's sections with positions: every problem names the
//! file, line and column, what is wrong and what would be right, and all
//! of a plan's problems are reported at once. The plan's parser uses it,
//! and so does each workload family for its own section (`[insert]`,
//! `[linkbench]`), so a family's parameters are named in its folder only.

use std::fmt;
use std::ops::Range;
use std::path::Path;

use toml::Spanned;

/// One problem in a plan.
#[derive(Debug, Clone, PartialEq)]
pub struct PlanError {
    pub file: String,
    pub line: usize,
    pub column: usize,
    pub message: String,
    pub help: Option<String>,
    /// The key it is about, when its place is a whole table (a step's
    /// table is read as one value, so its keys have no place of their
    /// own): what a command line that wrote the plan names as its flag.
    pub key: Option<&'static str>,
}

impl fmt::Display for PlanError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // What the plan said is echoed escaped and cut: a name with a
        // terminal's escape sequence, or ten megabytes of one.
        write!(
            f,
            "{}:{}:{}: {}",
            self.file,
            self.line,
            self.column,
            crate::util::printable(&self.message, 500)
        )?;
        if let Some(h) = &self.help {
            write!(f, "\n  help: {}", crate::util::printable(h, 500))?;
        }
        Ok(())
    }
}

/// All problems found in a plan.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub struct PlanErrors(pub Vec<PlanError>);

impl fmt::Display for PlanErrors {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let n = self.0.len();
        writeln!(
            f,
            "the plan has {n} problem{}; nothing was run",
            if n == 1 { "" } else { "s" }
        )?;
        for e in &self.0 {
            writeln!(f, "{e}")?;
        }
        Ok(())
    }
}

/// The longest duration a plan may give anything: a week.
pub const MAX_SECS: f64 = 7.0 * 86400.0;
/// The most rows a table may have: below the prime the zipfian scatter
/// multiplies by (`workload::dist`).
pub const MAX_ROWS: i64 = 2_000_000_000;

/// The problems found so far in one plan's text.
pub struct Ctx<'a> {
    pub file: &'a str,
    pub text: &'a str,
    /// Relative paths in the plan are relative to this directory.
    pub dir: &'a Path,
    pub errors: Vec<PlanError>,
}

impl Ctx<'_> {
    pub fn err(&mut self, span: Range<usize>, message: impl Into<String>, help: Option<String>) {
        let (line, column) = line_col(self.text, span.start);
        self.errors.push(PlanError {
            file: self.file.to_string(),
            line,
            column,
            message: message.into(),
            help,
            key: None,
        });
    }

    /// An error about `key` of the table at `span`.
    pub fn err_key(
        &mut self,
        span: Range<usize>,
        key: &'static str,
        message: impl Into<String>,
        help: Option<String>,
    ) {
        self.err(span, message, help);
        if let Some(e) = self.errors.last_mut() {
            e.key = Some(key);
        }
    }

    pub fn positive(&mut self, v: &Spanned<i64>, what: &str, max: i64) -> Option<i64> {
        let n = *v.get_ref();
        if n < 1 || n > max {
            self.err(
                v.span(),
                format!("{what} must be between 1 and {max}, not {n}"),
                None,
            );
            None
        } else {
            Some(n)
        }
    }

    /// One of a key's named values: `choices` pairs each name (matched
    /// without regard to case) with its value and what it means, which the
    /// error lists when the plan names another.
    pub fn choice<T: Copy>(
        &mut self,
        v: &Option<Spanned<String>>,
        what: &str,
        choices: &[(&str, T, &str)],
    ) -> Option<T> {
        let v = v.as_ref()?;
        let given = v.get_ref().to_ascii_lowercase();
        if let Some(&(_, value, _)) = choices.iter().find(|(name, _, _)| *name == given) {
            return Some(value);
        }
        let help = choices
            .iter()
            .map(|(name, _, means)| format!("\"{name}\" ({means})"))
            .collect::<Vec<_>>()
            .join(" or ");
        self.err(
            v.span(),
            format!("unknown {what} \"{}\"", v.get_ref()),
            Some(help),
        );
        None
    }

    /// A duration in seconds, from `min` to [`MAX_SECS`].
    pub fn duration(
        &mut self,
        v: &Option<Spanned<toml::Value>>,
        what: &str,
        default: f64,
        min: f64,
    ) -> f64 {
        let Some(v) = v else { return default };
        let secs = match v.get_ref() {
            toml::Value::String(s) => parse_duration(s),
            toml::Value::Integer(i) if *i >= 0 => Some(*i as f64),
            toml::Value::Float(f) if *f >= 0.0 && f.is_finite() => Some(*f),
            _ => None,
        };
        match secs {
            Some(s) if s > MAX_SECS => {
                self.err(
                    v.span(),
                    format!("{what} must be at most 7 days, not {}", v.get_ref()),
                    Some("a longer study is several runs, or repeats".into()),
                );
                default
            }
            Some(s) if s >= min => s,
            Some(_) => {
                self.err(
                    v.span(),
                    format!("{what} must be at least {}", human_duration(min)),
                    Some("a shorter window measures timer placement, not the server; for example \"30s\"".into()),
                );
                default
            }
            None => {
                self.err(
                    v.span(),
                    format!("{what} is not a duration: {}", v.get_ref()),
                    Some("write a number of seconds or a string such as \"500ms\", \"30s\", \"2m\", \"1h\"".into()),
                );
                default
            }
        }
    }
}

/// 1-based line and column (in characters) of a byte offset.
pub fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let before = &text[..offset.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let col = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    (line, col)
}

/// A number from `min` to `max`, integer or float.
pub fn number(
    cx: &mut Ctx<'_>,
    v: &Spanned<toml::Value>,
    what: &str,
    min: f64,
    max: f64,
) -> Option<f64> {
    let x = match v.get_ref() {
        toml::Value::Integer(i) => Some(*i as f64),
        toml::Value::Float(f) if f.is_finite() => Some(*f),
        _ => None,
    };
    match x {
        Some(x) if (min..=max).contains(&x) => Some(x),
        _ => {
            cx.err(
                v.span(),
                format!(
                    "{what} must be a number from {min} to {max}, not {}",
                    v.get_ref()
                ),
                None,
            );
            None
        }
    }
}

/// An integer from `min` to `max` into `out`, when the key is there.
pub fn int(
    cx: &mut Ctx<'_>,
    v: &Option<Spanned<i64>>,
    what: &str,
    min: i64,
    max: i64,
    out: &mut i64,
) {
    if let Some(v) = v {
        let n = *v.get_ref();
        if (min..=max).contains(&n) {
            *out = n;
        } else {
            cx.err(
                v.span(),
                format!("{what} must be from {min} to {max}, not {n}"),
                None,
            );
        }
    }
}

/// Seconds as a plan would write them: `100ms`, `30s`.
pub fn human_duration(secs: f64) -> String {
    if secs < 1.0 {
        format!("{:.0}ms", secs * 1e3)
    } else {
        format!("{secs}s")
    }
}

/// Parses a duration: `"30s"`, `"500ms"`, `"2m"`, `"1h"` or a number of seconds.
pub fn parse_duration(s: &str) -> Option<f64> {
    let s = s.trim();
    let (num, mult) = if let Some(n) = s.strip_suffix("ms") {
        (n, 0.001)
    } else if let Some(n) = s.strip_suffix('s') {
        (n, 1.0)
    } else if let Some(n) = s.strip_suffix('m') {
        (n, 60.0)
    } else if let Some(n) = s.strip_suffix('h') {
        (n, 3600.0)
    } else {
        (s, 1.0)
    };
    let v: f64 = num.trim().parse().ok()?;
    (v.is_finite() && v >= 0.0).then_some(v * mult)
}
