//! What each LinkBench connection does: a loader takes the next chunk of
//! ids and writes its nodes, or its links and their counts; a requester runs
//! one operation of the mix per event; a checker compares counts with links
//! over the next range of ids.

mod checker;
mod history;
mod loader;
mod requester;

use std::io::Write as _;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use rand::Rng as _;

use super::model::{self, Access, Graph, Motif, Multiget, Size, FIRST_LINK_TYPE, NODE_TYPE};
use super::{sql, Op, Params};
use crate::db::{Conn, DbResult, Dialect, ErrorKind, Param, Stmt};
use crate::measure::{Recorder, Tally};
use crate::workload::dist::Rng;
use crate::workload::{record_error as record, Client, ClientCtx};
pub use checker::Checker;
use history::TailHistory;
#[cfg(test)]
use loader::Batches;
pub use loader::Loader;
pub use requester::Requester;

/// What the connections of a step share: the next work item, and whether
/// the tables exist yet.
#[derive(Default)]
pub struct Shared {
    next: AtomicU64,
    created: AtomicBool,
}

fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
}

/// Motif generators as FBWorkload configures them: links bytes 32 to 100,
/// uniqueness 0.225; nodes 50 to 220, uniqueness 0.63 (both ends
/// included); motifs of 128 bytes.
fn link_motif(rng: &mut Rng) -> Motif {
    Motif::new(rng, 32, 100, 0.225, 128)
}
fn node_motif(rng: &mut Rng) -> Motif {
    // The original's bytes 50 … 220. Above 127 they are characters
    // U+0080 … U+00DC, which the connection sends as UTF-8 and MySQL and
    // MariaDB store in the latin1 column as the one byte the original
    // writes (PostgreSQL and SQLite keep them as UTF-8, two bytes).
    Motif::new(rng, 50, 220, 0.63, 128)
}

/// Appends `s` to a bulk row, with the backslash escaped (LOAD DATA's and
/// COPY's text formats both read `\\` as one).
fn push_escaped(buf: &mut Vec<u8>, s: &str) {
    for b in s.bytes() {
        if b == b'\\' {
            buf.push(b'\\');
        }
        buf.push(b);
    }
}

/// [`push_escaped`] for MySQL's LOAD DATA, which reads the file as bytes
/// (`CHARACTER SET binary`): each character as the latin1 byte it came
/// from, what the original's rows hold.
fn push_escaped_latin1(buf: &mut Vec<u8>, s: &str) {
    for c in s.chars() {
        let b = model::latin1_byte(c);
        if b == b'\\' {
            buf.push(b'\\');
        }
        buf.push(b);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn batches_use_the_full_size_then_powers_of_two() {
        let b = Batches::new(sql::load_nodes, 1024);
        let size = |left: usize| {
            if left >= b.full {
                b.full
            } else {
                1 << (usize::BITS - 1 - left.leading_zeros())
            }
        };
        assert_eq!(size(5000), 1024);
        assert_eq!(size(1023), 512);
        assert_eq!(size(5), 4);
        assert_eq!(size(1), 1);
    }

    #[test]
    fn bulk_rows_escape_the_backslash() {
        let mut buf = Vec::new();
        push_escaped(&mut buf, "a\\b");
        assert_eq!(buf, b"a\\\\b");
    }
}
