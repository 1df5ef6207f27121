//! A SQL workload as the plan writes it: named statements with `:name`
//! placeholders, each bound to a random function, what each must return,
//! their weights, transactions of them, and per-engine variants. Parsed
//! here into plain data the plan carries and the results record; checked
//! with positions inside each string, so the plan's error can name the
//! column of an unknown function.

use serde::{Deserialize, Serialize};

use crate::db::Dialect;

/// The most placeholders one statement may have.
pub const MAX_PARAMS: usize = 32;

/// A workload of the plan's own.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ScriptSpec {
    pub name: String,
    pub about: String,
    pub statements: Vec<StatementSpec>,
    /// When given, an event is one of these (by weight), each a
    /// transaction of named statements; otherwise one statement by weight.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub transactions: Vec<TxSpec>,
    /// Statements run once per target before the first step that uses
    /// the workload (its tables, indexes, rows), per engine.
    #[serde(default, skip_serializing_if = "Variants::is_empty")]
    pub setup: Variants<Vec<String>>,
}

/// A value, with what one engine needs instead.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct Variants<T> {
    pub all: T,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mysql: Option<T>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub postgres: Option<T>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sqlite: Option<T>,
}

impl<T> Variants<T> {
    pub fn for_dialect(&self, d: Dialect) -> &T {
        match d {
            Dialect::Mysql => self.mysql.as_ref(),
            Dialect::Postgres => self.postgres.as_ref(),
            Dialect::Sqlite => self.sqlite.as_ref(),
        }
        .unwrap_or(&self.all)
    }
}

impl Variants<Vec<String>> {
    pub fn is_empty(&self) -> bool {
        self.all.is_empty()
            && self.mysql.is_none()
            && self.postgres.is_none()
            && self.sqlite.is_none()
    }
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct StatementSpec {
    pub name: String,
    pub sql: Variants<String>,
    /// Each placeholder's random function, by placeholder name.
    pub bind: Vec<(String, Gen)>,
    pub returns: Returns,
    pub weight: u32,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct TxSpec {
    pub name: String,
    pub statements: Vec<String>,
    pub weight: u32,
}

/// What a statement must return (rows read, or rows changed), or it
/// counts as a wrong result.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum Returns {
    Any,
    Exactly(u64),
    AtLeast(u64),
}

impl Returns {
    /// `any`, `1`, `>=1`.
    pub fn parse(s: &str) -> Option<Returns> {
        let s = s.trim();
        if s == "any" {
            return Some(Returns::Any);
        }
        if let Some(n) = s.strip_prefix(">=") {
            return n.trim().parse().ok().map(Returns::AtLeast);
        }
        s.parse().ok().map(Returns::Exactly)
    }

    pub fn holds(self, n: u64) -> bool {
        match self {
            Returns::Any => true,
            Returns::Exactly(e) => n == e,
            Returns::AtLeast(e) => n >= e,
        }
    }
}

impl std::fmt::Display for Returns {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Returns::Any => write!(f, "any number of"),
            Returns::Exactly(n) => write!(f, "exactly {n}"),
            Returns::AtLeast(n) => write!(f, "at least {n}"),
        }
    }
}

/// A bound of a random function: a number, or the plan's scale.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "lowercase")]
pub enum Bound {
    Int(i64),
    /// The plan's rows per table.
    Rows,
    /// The plan's tables.
    Tables,
}

/// A random function a placeholder is bound to.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "lowercase")]
pub enum Gen {
    Uniform {
        lo: Bound,
        hi: Bound,
    },
    Zipfian {
        lo: Bound,
        hi: Bound,
        s: f64,
    },
    Pareto {
        lo: Bound,
        hi: Bound,
        alpha: f64,
    },
    Gaussian {
        mean: f64,
        sd: f64,
    },
    /// `access` percent of the draws in the hottest `hot` percent of [lo, hi].
    Hotset {
        lo: Bound,
        hi: Bound,
        hot: f64,
        access: f64,
    },
    /// Each client counts up from `start`, the clients interleaved, so no
    /// two values repeat: start + n × clients + client.
    Sequence {
        start: i64,
    },
    /// A string of `len` characters, `random_pct` percent of them random.
    String {
        len: u32,
        random_pct: u8,
    },
}

/// The functions, as `relbench list` and errors name them.
pub const FUNCTIONS: [&str; 7] = [
    "uniform(lo, hi)",
    "zipfian(lo, hi[, s])",
    "pareto(lo, hi[, alpha])",
    "gaussian(mean, sd)",
    "hotset(lo, hi, hot%, access%)",
    "sequence([start])",
    "string(len[, random%])",
];

/// A function's text with the byte offset, inside it, where it is wrong.
#[derive(Debug, PartialEq)]
pub struct GenError {
    pub at: usize,
    pub message: String,
}

impl Gen {
    /// Parses `uniform(1, rows)`.
    pub fn parse(text: &str) -> Result<Gen, GenError> {
        Call::parse(text)?.gen()
    }
}

fn err(at: usize, message: String) -> GenError {
    GenError { at, message }
}

/// A function call as written: its name, and each argument with its byte
/// offset in the text.
struct Call<'a> {
    /// Where the call starts, and where its `(` is.
    lead: usize,
    open: usize,
    name: &'a str,
    args: Vec<(usize, &'a str)>,
}

impl<'a> Call<'a> {
    fn parse(text: &'a str) -> Result<Call<'a>, GenError> {
        let lead = text.len() - text.trim_start().len();
        let t = text.trim();
        let Some(open) = t.find('(') else {
            return Err(err(
                lead,
                format!(
                    "\"{t}\" is not a function call; use one of: {}",
                    FUNCTIONS.join(", ")
                ),
            ));
        };
        if !t.ends_with(')') {
            return Err(err(lead + t.len(), "the call ends with ')'".into()));
        }
        let inner = &t[open + 1..t.len() - 1];
        let args: Vec<(usize, &str)> = if inner.trim().is_empty() {
            Vec::new()
        } else {
            let mut at = lead + open + 1;
            inner
                .split(',')
                .map(|a| {
                    let here = at + (a.len() - a.trim_start().len());
                    at += a.len() + 1;
                    (here, a.trim())
                })
                .collect()
        };
        Ok(Call {
            lead,
            open,
            name: t[..open].trim(),
            args,
        })
    }

    /// Argument `i` as a bound: a whole number, `rows` or `tables`.
    fn bound(&self, i: usize) -> Result<Bound, GenError> {
        let (at, a) = self.args[i];
        match a {
            "rows" => Ok(Bound::Rows),
            "tables" => Ok(Bound::Tables),
            n => n
                .parse()
                .map(Bound::Int)
                .map_err(|_| err(at, format!("\"{n}\" is not a whole number, rows or tables"))),
        }
    }

    fn num(&self, i: usize) -> Result<f64, GenError> {
        let (at, a) = self.args[i];
        a.parse::<f64>()
            .ok()
            .filter(|v| v.is_finite())
            .ok_or_else(|| err(at, format!("\"{a}\" is not a number")))
    }

    fn arity(&self, min: usize, max: usize) -> Result<(), GenError> {
        let n = self.args.len();
        if n >= min && n <= max {
            return Ok(());
        }
        let want = if min == max {
            format!("{min}")
        } else {
            format!("{min} to {max}")
        };
        Err(err(
            self.lead + self.open,
            format!("{}() takes {want} arguments, not {n}", self.name),
        ))
    }

    fn gen(&self) -> Result<Gen, GenError> {
        Ok(match self.name {
            "uniform" => {
                self.arity(2, 2)?;
                Gen::Uniform {
                    lo: self.bound(0)?,
                    hi: self.bound(1)?,
                }
            }
            "zipfian" => {
                self.arity(2, 3)?;
                let s = if self.args.len() == 3 {
                    self.num(2)?
                } else {
                    crate::workload::dist::ZIPF_EXPONENT
                };
                Gen::Zipfian {
                    lo: self.bound(0)?,
                    hi: self.bound(1)?,
                    s,
                }
            }
            "pareto" => self.pareto()?,
            "gaussian" => {
                self.arity(2, 2)?;
                Gen::Gaussian {
                    mean: self.num(0)?,
                    sd: self.num(1)?,
                }
            }
            "hotset" => self.hotset()?,
            "sequence" => {
                self.arity(0, 1)?;
                let start = match self.args.first() {
                    Some(&(at, a)) => a
                        .parse()
                        .map_err(|_| err(at, format!("\"{a}\" is not a whole number")))?,
                    None => 1,
                };
                Gen::Sequence { start }
            }
            "string" => self.string()?,
            other => {
                let names = FUNCTIONS.map(|f| f.split('(').next().unwrap_or(f));
                return Err(err(
                    self.lead,
                    match crate::util::did_you_mean(other, names.iter().copied()) {
                        Some(m) => format!("unknown function \"{other}\"; did you mean \"{m}\"?"),
                        None => format!(
                            "unknown function \"{other}\"; the functions are {}",
                            FUNCTIONS.join(", ")
                        ),
                    },
                ));
            }
        })
    }

    fn pareto(&self) -> Result<Gen, GenError> {
        self.arity(2, 3)?;
        let alpha = if self.args.len() == 3 {
            self.num(2)?
        } else {
            1.16
        };
        if alpha <= 0.0 {
            return Err(err(self.args[2].0, "pareto's alpha must be above 0".into()));
        }
        Ok(Gen::Pareto {
            lo: self.bound(0)?,
            hi: self.bound(1)?,
            alpha,
        })
    }

    fn hotset(&self) -> Result<Gen, GenError> {
        self.arity(4, 4)?;
        let (hot, access) = (self.num(2)?, self.num(3)?);
        for (i, v) in [(2, hot), (3, access)] {
            if !(0.0..=100.0).contains(&v) {
                return Err(err(
                    self.args[i].0,
                    format!("{v} is not a percentage from 0 to 100"),
                ));
            }
        }
        Ok(Gen::Hotset {
            lo: self.bound(0)?,
            hi: self.bound(1)?,
            hot,
            access,
        })
    }

    fn string(&self) -> Result<Gen, GenError> {
        self.arity(1, 2)?;
        let (at, a) = self.args[0];
        let len: u32 = a
            .parse()
            .ok()
            .filter(|n| (1..=65535).contains(n))
            .ok_or_else(|| err(at, format!("\"{a}\" is not a length from 1 to 65535")))?;
        let random_pct = match self.args.get(1) {
            Some(&(at, a)) => a
                .parse::<u8>()
                .ok()
                .filter(|p| *p <= 100)
                .ok_or_else(|| err(at, format!("\"{a}\" is not a percentage from 0 to 100")))?,
            None => 100,
        };
        Ok(Gen::String { len, random_pct })
    }
}

/// The placeholders of `sql`, in order, with their byte offsets: `:name`,
/// not inside quotes and not PostgreSQL's `::type` cast.
pub fn placeholders(sql: &str) -> Vec<(usize, String)> {
    let b = sql.as_bytes();
    let mut out = Vec::new();
    let mut quote: Option<u8> = None;
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        match quote {
            Some(q) if c == q => quote = None,
            Some(_) => {}
            None if c == b'\'' || c == b'"' || c == b'`' => quote = Some(c),
            None if c == b':' => {
                let cast = (i > 0 && b[i - 1] == b':') || b.get(i + 1) == Some(&b':');
                let start = i + 1;
                let mut j = start;
                while j < b.len() && (b[j].is_ascii_alphanumeric() || b[j] == b'_') {
                    j += 1;
                }
                if !cast && j > start && (b[start].is_ascii_alphabetic() || b[start] == b'_') {
                    out.push((i, sql[start..j].to_string()));
                    i = j;
                    continue;
                }
            }
            None => {}
        }
        i += 1;
    }
    out
}

/// `sql` with each placeholder replaced by the dialect's (`?`, `$1`).
pub fn rewrite(sql: &str, d: Dialect) -> String {
    let mut out = String::with_capacity(sql.len());
    let mut last = 0;
    for (n, (at, name)) in placeholders(sql).into_iter().enumerate() {
        out.push_str(&sql[last..at]);
        out.push_str(&d.placeholder(n));
        last = at + 1 + name.len();
    }
    out.push_str(&sql[last..]);
    out
}

/// Whether a statement reads rows (its count is rows returned) rather
/// than changes them (rows affected).
pub fn is_query(sql: &str) -> bool {
    let w = sql.trim_start().get(..6).unwrap_or("").to_ascii_uppercase();
    w.starts_with("SELECT")
        || w.starts_with("WITH")
        || w.starts_with("SHOW")
        || w.starts_with("VALUES")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn functions_parse_and_errors_point_into_the_text() {
        assert_eq!(
            Gen::parse("uniform(1, rows)"),
            Ok(Gen::Uniform {
                lo: Bound::Int(1),
                hi: Bound::Rows
            })
        );
        assert_eq!(
            Gen::parse(" string(120, 30)"),
            Ok(Gen::String {
                len: 120,
                random_pct: 30
            })
        );
        assert_eq!(Gen::parse("sequence()"), Ok(Gen::Sequence { start: 1 }));
        let e = Gen::parse("unifrom(1, 10)").unwrap_err();
        assert_eq!(e.at, 0);
        assert!(
            e.message.contains("did you mean \"uniform\""),
            "{}",
            e.message
        );
        let e = Gen::parse("uniform(1, lots)").unwrap_err();
        assert_eq!(e.at, 11);
        assert!(e.message.contains("\"lots\""));
        assert!(Gen::parse("gaussian(1)")
            .unwrap_err()
            .message
            .contains("takes 2 arguments"));
    }

    #[test]
    fn placeholders_are_found_outside_quotes_and_casts() {
        let sql = "SELECT c FROM t WHERE id = :id AND k = :k::int AND c <> ':no' OR id = :id";
        let p: Vec<String> = placeholders(sql).into_iter().map(|(_, n)| n).collect();
        assert_eq!(p, ["id", "k", "id"]);
        assert_eq!(
            rewrite(sql, Dialect::Postgres),
            "SELECT c FROM t WHERE id = $1 AND k = $2::int AND c <> ':no' OR id = $3"
        );
        assert_eq!(
            rewrite("UPDATE t SET c=:c WHERE id=:id", Dialect::Mysql),
            "UPDATE t SET c=? WHERE id=?"
        );
    }
}
