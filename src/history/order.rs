//! The order of builds: the user's `--order N` where given, otherwise the
//! version string in natural order, digits compared as numbers, so
//! 10.2.11 < 10.11.5 < 11.4.5 and "PostgreSQL 9.6" < "PostgreSQL 12.1".

use std::cmp::Ordering;

/// A build's place in its history.
#[derive(Debug, Clone, PartialEq)]
pub struct BuildOrder {
    pub name: String,
    /// Given by the user (`history add --order N`): comes before every
    /// build ordered by name alone.
    pub order: Option<f64>,
}

impl BuildOrder {
    pub fn compare(&self, other: &BuildOrder) -> Ordering {
        match (self.order, other.order) {
            (Some(a), Some(b)) => a
                .total_cmp(&b)
                .then_with(|| natural(&self.name, &other.name)),
            (Some(_), None) => Ordering::Less,
            (None, Some(_)) => Ordering::Greater,
            (None, None) => natural(&self.name, &other.name),
        }
    }
}

/// Natural order: runs of digits compared by value, everything else by
/// character.
pub fn natural(a: &str, b: &str) -> Ordering {
    let (mut a, mut b) = (a.as_bytes(), b.as_bytes());
    loop {
        match (a.first(), b.first()) {
            (None, None) => return Ordering::Equal,
            (None, Some(_)) => return Ordering::Less,
            (Some(_), None) => return Ordering::Greater,
            (Some(x), Some(y)) if x.is_ascii_digit() && y.is_ascii_digit() => {
                let da = a.iter().take_while(|c| c.is_ascii_digit()).count();
                let db = b.iter().take_while(|c| c.is_ascii_digit()).count();
                let (na, nb) = (trim_zeros(&a[..da]), trim_zeros(&b[..db]));
                let o = na.len().cmp(&nb.len()).then_with(|| na.cmp(nb));
                if o != Ordering::Equal {
                    return o;
                }
                (a, b) = (&a[da..], &b[db..]);
            }
            (Some(x), Some(y)) => {
                if x != y {
                    return x.cmp(y);
                }
                (a, b) = (&a[1..], &b[1..]);
            }
        }
    }
}

fn trim_zeros(d: &[u8]) -> &[u8] {
    let z = d.iter().take_while(|c| **c == b'0').count();
    &d[z.min(d.len().saturating_sub(1))..]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_sort_by_their_numbers() {
        let mut v = vec!["11.4.5", "10.11.5", "10.2.11", "10.2.9", "9.7.0"];
        v.sort_by(|a, b| natural(a, b));
        assert_eq!(v, ["9.7.0", "10.2.9", "10.2.11", "10.11.5", "11.4.5"]);
        let b = |n: &str, o: Option<f64>| BuildOrder {
            name: n.into(),
            order: o,
        };
        assert_eq!(b("z", Some(1.0)).compare(&b("a", None)), Ordering::Less);
        assert_eq!(
            b("a", Some(2.0)).compare(&b("z", Some(1.0))),
            Ordering::Greater
        );
        assert_eq!(natural("PostgreSQL 9.6", "PostgreSQL 12.1"), Ordering::Less);
        assert_eq!(natural("v007", "v7"), Ordering::Equal);
    }
}
