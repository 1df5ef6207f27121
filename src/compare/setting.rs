//! A setting that differs from the base, said in a sentence: only what
//! differs of it. A value that is a list of `flag=value` (MySQL's
//! `optimizer_switch`, hundreds of characters) is said by the flags that
//! differ; an empty value is said as empty, not as nothing; a long value
//! is cut. The report's table of settings keeps the whole values.

/// The most flags of a list said whole; past them, the first and how many
/// more. (Three flags said, with their names twice, made a MySQL 5.6 → 8.0
/// read step's sentence 459 characters: the lead, always said whole, was
/// two settings of which optimizer_switch took 230.)
const FLAGS: usize = 2;

/// The longest value said whole.
const LONGEST: usize = 60;

/// `innodb_flush_method O_DIRECT here, (empty) in the base`, or
/// `optimizer_switch: hash_join off here, on in the base`.
pub fn describe(key: &str, mine: &str, theirs: &str) -> String {
    if let (Some(a), Some(b)) = (flags(mine), flags(theirs)) {
        let mut differ: Vec<(&str, &str, &str)> = Vec::new();
        for (k, v) in &a {
            let w = b
                .iter()
                .find(|(x, _)| x == k)
                .map_or("(unset)", |(_, w)| *w);
            if w != *v {
                differ.push((k, v, w));
            }
        }
        for (k, w) in &b {
            if !a.iter().any(|(x, _)| x == k) {
                differ.push((k, "(unset)", w));
            }
        }
        if !differ.is_empty() {
            let (shown, more) = match differ.len() {
                n if n > FLAGS => (1, format!(" (and {} more flags)", n - 1)),
                n => (n, String::new()),
            };
            let said: Vec<String> = differ
                .iter()
                .take(shown)
                .map(|(k, v, w)| format!("{k} {v} here, {w} in the base"))
                .collect();
            return format!("{key}: {}{more}", said.join("; "));
        }
    }
    format!("{key} {} here, {} in the base", value(mine), value(theirs))
}

/// A comma-separated list of at least two `flag=value`, as its pairs.
fn flags(v: &str) -> Option<Vec<(&str, &str)>> {
    let pairs: Option<Vec<(&str, &str)>> = v
        .split(',')
        .map(|p| p.split_once('=').map(|(k, v)| (k.trim(), v.trim())))
        .collect();
    pairs.filter(|p| p.len() > 1)
}

/// A value as a sentence can hold it.
fn value(v: &str) -> String {
    let v = v.trim();
    if v.is_empty() {
        return "(empty)".into();
    }
    match v.char_indices().nth(LONGEST) {
        Some((at, _)) => format!("{}… ({} characters)", &v[..at], v.chars().count()),
        None => v.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Regression (issue 63): on MySQL 5.6 → 8.0 every explanation carried
    /// both sides' whole optimizer_switch, hundreds of characters twice.
    #[test]
    fn a_list_of_flags_is_said_by_the_flags_that_differ() {
        let base = "index_merge=on,mrr=on,hash_join=on,skip_scan=on";
        let mine = "index_merge=on,mrr=off,hash_join=off,skip_scan=on";
        assert_eq!(
            describe("optimizer_switch", mine, base),
            "optimizer_switch: mrr off here, on in the base; hash_join off here, on in the base"
        );
        // A flag one side has not (an older version's list).
        assert_eq!(
            describe("optimizer_switch", "a=on,b=on", "a=on,b=on,c=off"),
            "optimizer_switch: c (unset) here, off in the base"
        );
        let many = describe("s", "a=1,b=1,c=1,d=1,e=1", "a=0,b=0,c=0,d=0,e=0");
        assert_eq!(many, "s: a 1 here, 0 in the base (and 4 more flags)");
    }

    /// Regression (issue 63): `innodb_flush_method fsync here,  in the
    /// base` — an empty value printed as nothing.
    #[test]
    fn an_empty_value_is_said_as_empty_and_a_long_one_is_cut() {
        assert_eq!(
            describe("innodb_flush_method", "fsync", ""),
            "innodb_flush_method fsync here, (empty) in the base"
        );
        assert_eq!(
            describe("sync_binlog", "1", "0"),
            "sync_binlog 1 here, 0 in the base"
        );
        let long = "x".repeat(200);
        let said = describe("k", &long, "y");
        assert!(
            said.contains("… (200 characters) here, y in the base"),
            "{said}"
        );
    }
}
