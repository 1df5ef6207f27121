//! The per-second series on disk as columns, one array per field (a
//! field no second has is left out): the field names once, not once a
//! second. Files written before schema version 7 hold one object per
//! second; both are read.

use super::sampler::SecondSample;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// A figure written as a whole number when it is one (`100`, not
/// `100.0`): most seconds' shares are 0 or 100.
#[derive(Clone, Copy)]
struct Num(f64);

impl Serialize for Num {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        if self.0.is_finite() && self.0.fract() == 0.0 && self.0.abs() < 9e15 {
            s.serialize_i64(self.0 as i64)
        } else {
            s.serialize_f64(self.0)
        }
    }
}

/// How a field's values go to disk and back.
trait Wire: Copy {
    type Out: Serialize;
    type In: Copy + for<'de> Deserialize<'de>;
    fn out(self) -> Self::Out;
    fn back(v: Self::In) -> Self;
}

impl Wire for f64 {
    type Out = Num;
    type In = f64;
    fn out(self) -> Num {
        Num(self)
    }
    fn back(v: f64) -> f64 {
        v
    }
}

impl Wire for u64 {
    type Out = u64;
    type In = u64;
    fn out(self) -> u64 {
        self
    }
    fn back(v: u64) -> u64 {
        v
    }
}

macro_rules! columns {
    ($($req:ident),* ; $($opt:ident : $t:ty),*) => {
        #[derive(Serialize)]
        struct Out {
            $($req: Vec<Num>,)*
            $(
                #[serde(skip_serializing_if = "none")]
                $opt: Vec<Option<<$t as Wire>::Out>>,
            )*
        }

        #[derive(Deserialize, Default)]
        #[serde(default)]
        struct Columns {
            $($req: Vec<f64>,)*
            $($opt: Vec<Option<<$t as Wire>::In>>,)*
        }

        fn to_columns(rows: &[SecondSample]) -> Out {
            Out {
                $($req: rows.iter().map(|r| Num(r.$req)).collect(),)*
                $($opt: rows.iter().map(|r| r.$opt.map(Wire::out)).collect(),)*
            }
        }

        fn from_columns(c: Columns) -> Vec<SecondSample> {
            let n = c.t.len();
            (0..n)
                .map(|i| SecondSample {
                    $($req: c.$req.get(i).copied().unwrap_or_default(),)*
                    $($opt: c.$opt.get(i).copied().flatten().map(<$t as Wire>::back),)*
                })
                .collect()
        }
    };
}

columns!(t, secs;
    cpu_util_pct: f64, iowait_pct: f64, cs_per_sec: f64, reads_per_sec: f64,
    read_mb_per_sec: f64, writes_per_sec: f64, write_mb_per_sec: f64,
    server_cpu_pct: f64, client_cpu_pct: f64, other_cpu_pct: f64, steal_pct: f64,
    server_rss_bytes: u64);

fn none<T>(v: &[Option<T>]) -> bool {
    v.iter().all(Option::is_none)
}

pub fn serialize<S: Serializer>(rows: &[SecondSample], s: S) -> Result<S::Ok, S::Error> {
    to_columns(rows).serialize(s)
}

#[derive(Deserialize)]
#[serde(untagged)]
enum Either {
    Rows(Vec<SecondSample>),
    Columns(Box<Columns>),
}

pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<SecondSample>, D::Error> {
    Ok(match Either::deserialize(d)? {
        Either::Columns(c) => from_columns(*c),
        Either::Rows(r) => r,
    })
}

#[cfg(test)]
mod tests {
    use crate::metrics::sampler::SecondSample;

    #[derive(serde::Serialize, serde::Deserialize, PartialEq, Debug)]
    struct Holder {
        #[serde(with = "super")]
        s: Vec<SecondSample>,
    }

    #[test]
    fn the_series_goes_to_disk_as_columns_and_comes_back_the_same() {
        let rows = vec![
            SecondSample {
                t: 1.004,
                secs: 1.0,
                cpu_util_pct: Some(100.0),
                cs_per_sec: Some(18581.167),
                server_rss_bytes: Some(123_456_789),
                ..SecondSample::default()
            },
            SecondSample {
                t: 2.0,
                secs: 0.996,
                cpu_util_pct: None,
                cs_per_sec: Some(0.5),
                ..SecondSample::default()
            },
        ];
        let h = Holder { s: rows };
        let text = serde_json::to_string(&h).unwrap();
        assert_eq!(
            text,
            r#"{"s":{"t":[1.004,2],"secs":[1,0.996],"cpu_util_pct":[100,null],"cs_per_sec":[18581.167,0.5],"server_rss_bytes":[123456789,null]}}"#
        );
        assert_eq!(serde_json::from_str::<Holder>(&text).unwrap(), h);
        // Files before schema version 7: an object a second.
        let old = r#"{"s":[{"t":1.004,"secs":1.0,"cpu_util_pct":100.0,"cs_per_sec":18581.167,"server_rss_bytes":123456789},{"t":2.0,"secs":0.996,"cs_per_sec":0.5}]}"#;
        assert_eq!(serde_json::from_str::<Holder>(old).unwrap(), h);
        let empty: Holder = serde_json::from_str(r#"{"s":[]}"#).unwrap();
        assert!(empty.s.is_empty());
    }
}
