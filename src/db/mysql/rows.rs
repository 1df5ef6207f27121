//! The MySQL protocol's encodings that commands and rows share:
//! length-encoded integers, and a row's values (text rows as strings, one
//! integer column of a binary row, a binary row as text), for the few
//! reads that need a value.

/// Reads a length-encoded integer at `*pos`.
pub(super) fn lenenc(buf: &[u8], pos: &mut usize) -> Option<u64> {
    let b = *buf.get(*pos)?;
    *pos += 1;
    let (n, v) = match b {
        0..=0xFA => return Some(b as u64),
        0xFC => (2, 0),
        0xFD => (3, 0),
        0xFE => (8, 0),
        _ => return None, // 0xFB is NULL, 0xFF is not an integer
    };
    let bytes = buf.get(*pos..*pos + n)?;
    *pos += n;
    Some(bytes.iter().rev().fold(v, |acc, x| (acc << 8) | *x as u64))
}

pub(super) fn put_lenenc(out: &mut Vec<u8>, v: u64) {
    match v {
        0..=0xFA => out.push(v as u8),
        0xFB..=0xFFFF => {
            out.push(0xFC);
            out.extend_from_slice(&(v as u16).to_le_bytes());
        }
        0x1_0000..=0xFF_FFFF => {
            out.push(0xFD);
            out.extend_from_slice(&(v as u32).to_le_bytes()[..3]);
        }
        _ => {
            out.push(0xFE);
            out.extend_from_slice(&v.to_le_bytes());
        }
    }
}

/// The type byte of a column definition packet (Protocol::ColumnDefinition41:
/// six length-encoded strings, the length of the fixed fields, the
/// character set, the column length, then the type).
pub(super) fn column_type(buf: &[u8]) -> u8 {
    let mut pos = 0;
    for _ in 0..6 {
        let Some(n) = lenenc(buf, &mut pos) else {
            return 0;
        };
        pos += n as usize;
    }
    let _ = lenenc(buf, &mut pos);
    buf.get(pos + 6).copied().unwrap_or(0)
}

/// A binary protocol row's fields in order, each with its type and its
/// bytes (`None` for NULL): the row's NULL bitmap (offset by 2 bits) and
/// each column's length, by its type, lead from one to the next. It ends
/// early at a field the packet does not hold.
fn binary_fields<'a>(
    buf: &'a [u8],
    types: &'a [u8],
) -> impl Iterator<Item = (u8, Option<&'a [u8]>)> + 'a {
    let null = move |i: usize| {
        buf.get(1 + (i + 2) / 8)
            .is_some_and(|b| b & (1 << ((i + 2) % 8)) != 0)
    };
    let mut pos = 1 + (types.len() + 7 + 2) / 8;
    types.iter().enumerate().map_while(move |(i, &t)| {
        if null(i) {
            return Some((t, None));
        }
        let (at, len) = match t {
            0x01 => (pos, 1),                                                // TINY
            0x02 | 0x0d => (pos, 2),                                         // SHORT, YEAR
            0x03 | 0x09 | 0x04 => (pos, 4),                                  // LONG, INT24, FLOAT
            0x08 | 0x05 => (pos, 8),                                         // LONGLONG, DOUBLE
            0x06 => return Some((t, None)),                                  // NULL
            0x07 | 0x0a | 0x0b | 0x0c => (pos + 1, *buf.get(pos)? as usize), // temporal: a length byte
            _ => {
                let n = lenenc(buf, &mut pos)? as usize;
                (pos, n)
            }
        };
        pos = at + len;
        Some((t, Some(buf.get(at..at + len)?)))
    })
}

/// An integer type's value, read as signed.
fn int_value(t: u8, v: &[u8]) -> Option<i64> {
    Some(match t {
        0x01 => i64::from(*v.first()? as i8),
        0x02 | 0x0d => i64::from(i16::from_le_bytes(v.try_into().ok()?)),
        0x03 | 0x09 => i64::from(i32::from_le_bytes(v.try_into().ok()?)),
        0x08 => i64::from_le_bytes(v.try_into().ok()?),
        _ => return None,
    })
}

/// Column `col` of a binary protocol row as an integer. Integer types
/// are read as they are, strings and decimals parsed; `None` for NULL or
/// another type.
pub(super) fn binary_int(buf: &[u8], types: &[u8], col: usize) -> Option<i64> {
    let (t, v) = binary_fields(buf, types).nth(col)?;
    let v = v?;
    match t {
        0x01 | 0x02 | 0x0d | 0x03 | 0x09 | 0x08 => int_value(t, v),
        0x04 | 0x05 | 0x07 | 0x0a | 0x0b | 0x0c => None,
        _ => std::str::from_utf8(v).ok()?.parse().ok(),
    }
}

/// A binary protocol row's values as text, as the text protocol would
/// send them (integers and floats written out, decimals and strings as
/// sent, dates as `YYYY-MM-DD HH:MM:SS[.ffffff]`), NULL as `None`: what a
/// client reads of the few rows whose values drive it (TPC-C's next order
/// id, a customer's balance). Integers are read as signed.
pub(super) fn binary_row(buf: &[u8], types: &[u8]) -> Vec<Option<String>> {
    let mut row: Vec<Option<String>> = binary_fields(buf, types)
        .map(|(t, v)| {
            let v = v?;
            Some(match t {
                0x04 => f32::from_le_bytes(v.try_into().ok()?).to_string(),
                0x05 => f64::from_le_bytes(v.try_into().ok()?).to_string(),
                0x07 | 0x0a | 0x0c => temporal(v),
                0x0b => time(v),
                _ => match int_value(t, v) {
                    Some(i) => i.to_string(),
                    None => String::from_utf8_lossy(v).into_owned(),
                },
            })
        })
        .collect();
    // A packet that ends early leaves the rest unread.
    row.resize(types.len(), None);
    row
}

/// A binary DATE, DATETIME or TIMESTAMP (its length byte read): year,
/// month, day, then the time and microseconds when sent.
fn temporal(v: &[u8]) -> String {
    let n = |i: usize| v.get(i).copied().unwrap_or(0) as u32;
    let year = u16::from_le_bytes([n(0) as u8, n(1) as u8]);
    let mut s = format!("{year:04}-{:02}-{:02}", n(2), n(3));
    if v.len() >= 7 {
        s.push_str(&format!(" {:02}:{:02}:{:02}", n(4), n(5), n(6)));
    }
    if v.len() >= 11 {
        let us = u32::from_le_bytes([v[7], v[8], v[9], v[10]]);
        s.push_str(&format!(".{us:06}"));
    }
    s
}

/// A binary TIME: its sign, days, hours, minutes, seconds, microseconds.
fn time(v: &[u8]) -> String {
    if v.len() < 8 {
        return "00:00:00".to_string();
    }
    let days = u32::from_le_bytes([v[1], v[2], v[3], v[4]]);
    let hours = days * 24 + v[5] as u32;
    let sign = if v[0] == 1 { "-" } else { "" };
    let mut s = format!("{sign}{hours:02}:{:02}:{:02}", v[6], v[7]);
    if v.len() >= 12 {
        let us = u32::from_le_bytes([v[8], v[9], v[10], v[11]]);
        s.push_str(&format!(".{us:06}"));
    }
    s
}

pub(super) fn text_row(buf: &[u8], cols: usize) -> Vec<Option<String>> {
    let mut pos = 0;
    (0..cols)
        .map(|_| {
            if buf.get(pos) == Some(&0xFB) {
                pos += 1;
                return None;
            }
            let n = lenenc(buf, &mut pos)? as usize;
            let s = buf
                .get(pos..pos + n)
                .map(|b| String::from_utf8_lossy(b).into_owned());
            pos += n;
            s
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_binary_row_reads_as_the_text_protocol_would_send_it() {
        // An INT, a NULL DECIMAL, a DOUBLE, a VARCHAR, a DATETIME, a
        // BIGINT: header, NULL bitmap (offset 2: column 1 → bit 3), values.
        let types = [0x03, 0xf6, 0x05, 0xfd, 0x0c, 0x08];
        let mut row = vec![0x00, 0b0000_1000];
        row.extend_from_slice(&(-7i32).to_le_bytes());
        row.extend_from_slice(&2.5f64.to_le_bytes());
        row.extend_from_slice(&[5, b'B', b'A', b'R', b'B', b'A']);
        row.extend_from_slice(&[7, 0xea, 0x07, 12, 2, 3, 4, 5]);
        row.extend_from_slice(&3_000_000_000i64.to_le_bytes());
        let got = binary_row(&row, &types);
        let want = [
            Some("-7"),
            None,
            Some("2.5"),
            Some("BARBA"),
            Some("2026-12-02 03:04:05"),
            Some("3000000000"),
        ];
        assert_eq!(got, want.map(|v| v.map(String::from)));
        assert_eq!(binary_int(&row, &types, 5), Some(3_000_000_000));
    }

    #[test]
    fn length_encoded_integers_round_trip() {
        for v in [
            0u64,
            250,
            251,
            65535,
            65536,
            0xFF_FFFF,
            0x100_0000,
            u64::MAX,
        ] {
            let mut out = Vec::new();
            put_lenenc(&mut out, v);
            let mut pos = 0;
            assert_eq!(lenenc(&out, &mut pos), Some(v), "{v}");
            assert_eq!(pos, out.len());
        }
    }

    #[test]
    fn a_binary_rows_integer_column_is_read_past_nulls_and_strings() {
        // A column definition: six strings, the fixed part's length, then
        // charset (2), length (4), type.
        let def = |t: u8| {
            let mut d = Vec::new();
            for s in ["def", "sbtest", "l", "linktable", "c", "c"] {
                put_lenenc(&mut d, s.len() as u64);
                d.extend_from_slice(s.as_bytes());
            }
            d.push(0x0c);
            d.extend_from_slice(&[33, 0, 20, 0, 0, 0, t, 0, 0, 0, 0, 0]);
            d
        };
        // id1 BIGINT, visibility TINYINT, data VARBINARY, time BIGINT,
        // version INT NULL.
        let types: Vec<u8> = [0x08, 0x01, 0xfd, 0x08, 0x03]
            .iter()
            .map(|&t| column_type(&def(t)))
            .collect();
        assert_eq!(types, [0x08, 0x01, 0xfd, 0x08, 0x03]);
        let mut row = vec![0x00, 0b1000_0000]; // version (column 4) is NULL
        row.extend_from_slice(&42i64.to_le_bytes());
        row.push(0);
        put_lenenc(&mut row, 3);
        row.extend_from_slice(b"abc");
        row.extend_from_slice(&1_795_484_569_000i64.to_le_bytes());
        assert_eq!(binary_int(&row, &types, 0), Some(42));
        assert_eq!(binary_int(&row, &types, 1), Some(0));
        assert_eq!(binary_int(&row, &types, 3), Some(1_795_484_569_000));
        assert_eq!(binary_int(&row, &types, 4), None);
    }
}
