//! The floor a benchmark client is measured against: a client that does
//! nothing but the syscalls. Each connection is opened and its point
//! query prepared by relbench's own wire clients (so the server sees the
//! same statement, on the same connection shape: TCP to 127.0.0.1,
//! TCP_NODELAY, one connection a client), then the loop only writes the
//! bytes relbench writes for one execution (MariaDB's COM_STMT_EXECUTE
//! with the id as a LONGLONG; PostgreSQL's Bind, Execute and Sync with the
//! id in text) and reads until the reply is whole, counting packets and
//! messages without decoding a row. Ids are uniform over the table, from
//! a xorshift generator.
//!
//! Used by `bench/client_floor.py`:
//!
//!     client_floor ENGINE PORT DB CLIENTS SECS ROWS
//!
//! ENGINE is mariadb or postgres; the user is `relbench`, the password in
//! RELBENCH_BENCH_PASSWORD. Prints `events N secs S`.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use relbench::db::mysql::wire as my;
use relbench::db::postgres::wire as pg;

const SQL_MY: &str = "SELECT c FROM sbtest1 WHERE id=?";
const SQL_PG: &str = "SELECT c FROM sbtest1 WHERE id=$1";
const CLIENT_DEPRECATE_EOF: u32 = 0x100_0000;

struct Rng(u64);

impl Rng {
    fn next(&mut self, n: u64) -> i64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % n) as i64 + 1
    }
}

/// Reads into `buf` until `done` says the bytes so far hold a whole reply.
fn read_reply(s: &mut TcpStream, buf: &mut Vec<u8>, done: impl Fn(&[u8]) -> bool) {
    buf.clear();
    let mut chunk = [0u8; 16384];
    loop {
        let n = s.read(&mut chunk).expect("read");
        assert!(n > 0, "the server closed the connection");
        buf.extend_from_slice(&chunk[..n]);
        if done(buf) {
            return;
        }
    }
}

/// A MariaDB binary result set is whole at its last EOF/OK packet: the
/// column count, the column definitions (and an EOF without
/// DEPRECATE_EOF), the rows, then 0xFE.
fn mysql_done(b: &[u8], eof_after_columns: bool) -> bool {
    let mut at = 0;
    let mut packets = Vec::new();
    while at + 4 <= b.len() {
        let len = u32::from_le_bytes([b[at], b[at + 1], b[at + 2], 0]) as usize;
        if at + 4 + len > b.len() {
            return false;
        }
        packets.push(&b[at + 4..at + 4 + len]);
        at += 4 + len;
    }
    let Some(first) = packets.first() else {
        return false;
    };
    if first[0] == 0xFF || first[0] == 0x00 {
        return true; // an error, or OK without rows
    }
    let columns = first[0] as usize;
    let rows_from = 1 + columns + usize::from(eof_after_columns);
    packets.len() > rows_from
        && packets[rows_from..]
            .iter()
            .any(|p| p[0] == 0xFE && p.len() < 9)
}

/// A PostgreSQL reply is whole at ReadyForQuery ('Z').
fn pg_done(b: &[u8]) -> bool {
    let mut at = 0;
    while at + 5 <= b.len() {
        let len = u32::from_be_bytes([b[at + 1], b[at + 2], b[at + 3], b[at + 4]]) as usize;
        if at + 1 + len > b.len() {
            return false;
        }
        if b[at] == b'Z' {
            return true;
        }
        at += 1 + len;
    }
    false
}

fn client(engine: &str, port: u16, db: &str, rows: u64, seed: u64, stop: &AtomicBool) -> u64 {
    let password = std::env::var("RELBENCH_BENCH_PASSWORD").ok();
    let mut rng = Rng(seed | 1);
    let mut buf = Vec::with_capacity(1 << 16);
    let mut out: Vec<u8> = Vec::with_capacity(64);
    let mut events = 0;
    if engine == "mariadb" {
        let mut c = my::WireConn::connect(&my::Opts {
            address: my::Address::Tcp {
                host: "127.0.0.1".into(),
                port,
            },
            user: "relbench".into(),
            password,
            database: Some(db.into()),
            tls: Default::default(),
            found_rows: true,
        })
        .expect("connect");
        c.prepare(SQL_MY).expect("prepare");
        let (mut s, caps, ids) = c.into_raw().expect("a TCP connection");
        let eof = caps & CLIENT_DEPRECATE_EOF == 0;
        while !stop.load(Ordering::Relaxed) {
            out.clear();
            out.extend_from_slice(&[0, 0, 0, 0, 0x17]);
            out.extend_from_slice(&ids[0].to_le_bytes());
            out.push(0);
            out.extend_from_slice(&1u32.to_le_bytes());
            out.extend_from_slice(&[0, 1, 8, 0]);
            out.extend_from_slice(&rng.next(rows).to_le_bytes());
            let len = (out.len() - 4) as u32;
            out[..3].copy_from_slice(&len.to_le_bytes()[..3]);
            s.write_all(&out).expect("write");
            read_reply(&mut s, &mut buf, |b| mysql_done(b, eof));
            events += 1;
        }
    } else {
        let c = pg::WireConn::connect(&pg::Opts {
            address: pg::Address::Tcp {
                host: "127.0.0.1".into(),
                port,
            },
            user: "relbench".into(),
            password,
            database: db.into(),
            tls: Default::default(),
            auth: Default::default(),
        });
        let mut c = c.expect("connect");
        c.prepare(SQL_PG).expect("prepare");
        let mut s = c.into_raw().expect("a TCP connection");
        while !stop.load(Ordering::Relaxed) {
            out.clear();
            // Bind: unnamed portal, statement s0, one text parameter.
            out.push(b'B');
            out.extend_from_slice(&[0, 0, 0, 0]);
            out.extend_from_slice(b"\0s0\0\0\0\0\x01");
            let id = rng.next(rows).to_string();
            out.extend_from_slice(&(id.len() as u32).to_be_bytes());
            out.extend_from_slice(id.as_bytes());
            out.extend_from_slice(&[0, 0]);
            let len = (out.len() - 1) as u32;
            out[1..5].copy_from_slice(&len.to_be_bytes());
            out.extend_from_slice(&[b'E', 0, 0, 0, 9, 0, 0, 0, 0, 0]);
            out.extend_from_slice(&[b'S', 0, 0, 0, 4]);
            s.write_all(&out).expect("write");
            read_reply(&mut s, &mut buf, pg_done);
            events += 1;
        }
    }
    events
}

fn main() {
    let a: Vec<String> = std::env::args().collect();
    if a.len() != 7 {
        eprintln!("usage: client_floor ENGINE PORT DB CLIENTS SECS ROWS");
        std::process::exit(2);
    }
    let (engine, port, db) = (a[1].clone(), a[2].parse().unwrap(), a[3].clone());
    let (clients, secs, rows): (u64, f64, u64) = (
        a[4].parse().unwrap(),
        a[5].parse().unwrap(),
        a[6].parse().unwrap(),
    );
    let stop = AtomicBool::new(false);
    let t0 = Instant::now();
    let events: u64 = std::thread::scope(|s| {
        let handles: Vec<_> = (0..clients)
            .map(|i| {
                let (engine, db, stop) = (&engine, &db, &stop);
                s.spawn(move || client(engine, port, db, rows, 0x9E37_79B9 + i * 7919, stop))
            })
            .collect();
        std::thread::sleep(Duration::from_secs_f64(secs));
        stop.store(true, Ordering::Relaxed);
        handles.into_iter().map(|h| h.join().unwrap()).sum()
    });
    println!("events {events} secs {:.3}", t0.elapsed().as_secs_f64());
}
