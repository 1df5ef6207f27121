//! A lean, synchronous MySQL/MariaDB client protocol implementation.
//!
//! Why not the `mysql` crate: the client shares the machine with the server
//! it measures, so its CPU per operation must stay below sysbench's (libmysqlclient).
//! The `mysql` crate was measured on these machines at about 0.96× sysbench
//! on point queries, before this client was written — it decodes every row
//! into owned values.
//! A benchmark client only needs to count rows, so this one reads result
//! packets into one reusable buffer and never decodes a row; statements use
//! the binary protocol (COM_STMT_EXECUTE), prepared once per connection.
//! `bench/` measures the outcome against sysbench.

use std::io::{self, BufReader, Read, Write};
use std::path::PathBuf;
use std::time::Duration;

use super::auth::auth_response;
use super::rows::{binary_int, binary_row, column_type, lenenc, put_lenenc, text_row};

use crate::db::protocol::Outcome;
use crate::db::stream::{self, Stream};
use crate::db::tls::Tls;
use crate::db::{DbError, DbResult, ErrorKind, Param};

const CLIENT_LONG_PASSWORD: u32 = 1;
/// Affected rows count matched rows, not changed rows, as in SQLite and
/// PostgreSQL, so row checks mean the same on every engine.
const CLIENT_FOUND_ROWS: u32 = 2;
const CLIENT_LONG_FLAG: u32 = 4;
const CLIENT_LOCAL_FILES: u32 = 0x80;
const CLIENT_CONNECT_WITH_DB: u32 = 8;
const CLIENT_PROTOCOL_41: u32 = 0x200;
const CLIENT_SSL: u32 = 0x800;
const CLIENT_TRANSACTIONS: u32 = 0x2000;
const CLIENT_SECURE_CONNECTION: u32 = 0x8000;
const CLIENT_MULTI_STATEMENTS: u32 = 0x1_0000;
const CLIENT_MULTI_RESULTS: u32 = 0x2_0000;
const CLIENT_PS_MULTI_RESULTS: u32 = 0x4_0000;
const CLIENT_PLUGIN_AUTH: u32 = 0x8_0000;
const CLIENT_PLUGIN_AUTH_LENENC_CLIENT_DATA: u32 = 0x20_0000;
const CLIENT_DEPRECATE_EOF: u32 = 0x100_0000;

const SERVER_MORE_RESULTS_EXISTS: u16 = 0x0008;

const COM_QUIT: u8 = 0x01;
const COM_QUERY: u8 = 0x03;
const COM_STMT_PREPARE: u8 = 0x16;
const COM_STMT_EXECUTE: u8 = 0x17;

const MYSQL_TYPE_LONGLONG: u8 = 0x08;
const MYSQL_TYPE_VAR_STRING: u8 = 0xFD;
/// utf8mb4_general_ci: known to MariaDB and MySQL alike.
const CHARSET: u8 = 45;
const MAX_PACKET: usize = 0xFF_FFFF;

/// Where the server listens.
#[derive(Debug, Clone, PartialEq)]
pub enum Address {
    Tcp { host: String, port: u16 },
    Socket(PathBuf),
}

#[derive(Clone)]
pub struct Opts {
    pub address: Address,
    pub user: String,
    pub password: Option<String>,
    pub database: Option<String>,
    /// Whether TCP connections are encrypted.
    pub tls: Tls,
    /// Writes report the rows they matched (`CLIENT_FOUND_ROWS`, as
    /// libmysqlclient's users mostly ask), or, when false, the rows they
    /// changed.
    pub found_rows: bool,
}

/// Prints everything but the password.
impl std::fmt::Debug for Opts {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Opts")
            .field("address", &self.address)
            .field("user", &self.user)
            .field("tls", &self.tls)
            .field("password", &self.password.as_ref().map(|_| "…"))
            .field("database", &self.database)
            .finish()
    }
}

struct Prepared {
    id: u32,
    params: usize,
}

pub struct WireConn {
    rd: BufReader<Stream>,
    /// Payload of the last packet read.
    buf: Vec<u8>,
    /// The packet being built: 4 header bytes, then the payload.
    out: Vec<u8>,
    seq: u8,
    caps: u32,
    stmts: Vec<Prepared>,
    pub server_version: String,
    pub connection_id: u32,
    /// Set once an IO error broke the connection.
    broken: bool,
    /// The server wanted caching_sha2_password's full authentication over
    /// a plain TCP connection, which may not carry the password.
    full_auth_refused: bool,
    /// What it was opened with, to open it again with other capabilities.
    opts: Opts,
    /// A column whose value each row is read for, the last row's kept.
    watch: Option<usize>,
    last: Option<i64>,
    /// The result set's column types, read while a column is watched or
    /// rows are kept.
    types: Vec<u8>,
    /// Rows of the commands run while [`WireConn::keep_rows`] is on.
    keeping: bool,
    kept: Vec<Vec<Option<String>>>,
    /// The command in flight was COM_STMT_EXECUTE: its rows are in the
    /// binary protocol, not text.
    binary: bool,
}

fn io_err(e: io::Error) -> DbError {
    DbError::io(&e)
}

fn proto_err(msg: impl Into<String>) -> DbError {
    DbError::new(
        ErrorKind::Connection,
        format!("protocol error: {}", msg.into()),
    )
}

/// Maps a server error code to what the engine should do about it.
pub fn error_kind(code: u16) -> ErrorKind {
    match code {
        1213 => ErrorKind::Deadlock,
        1205 => ErrorKind::Busy,
        1062 | 1451 | 1452 | 1586 => ErrorKind::Constraint,
        1021 | 1114 | 3 => ErrorKind::DiskFull,
        1053 | 1927 | 2006 | 2013 => ErrorKind::Connection,
        _ => ErrorKind::Other,
    }
}

impl WireConn {
    pub fn connect(opts: &Opts) -> DbResult<Self> {
        let mut c = WireConn::connect_plain(opts)?;
        match c.handshake(opts) {
            Ok(()) => Ok(c),
            Err(e) if c.full_auth_refused => {
                // caching_sha2_password has not cached this account's
                // password since the server started, and a plain TCP
                // connection may not carry it. One connection over TLS
                // authenticates fully and fills the cache; this one, as
                // the target asks, then stays plain.
                let over_tls = Opts {
                    tls: Tls::Required,
                    ..opts.clone()
                };
                WireConn::connect(&over_tls).map_err(|t| {
                    DbError::new(
                        ErrorKind::Other,
                        format!(
                            "{}; authenticating over TLS instead failed too: {}",
                            e.message, t.message
                        ),
                    )
                })?;
                let mut again = WireConn::connect_plain(opts)?;
                again.handshake(opts)?;
                Ok(again)
            }
            Err(e) => Err(e),
        }
    }

    fn connect_plain(opts: &Opts) -> DbResult<Self> {
        let stream = match &opts.address {
            Address::Tcp { host, port } => Stream::tcp(host, *port)?,
            Address::Socket(p) => Stream::unix(p)?,
        };
        Ok(WireConn {
            rd: BufReader::with_capacity(64 * 1024, stream),
            buf: Vec::with_capacity(64 * 1024),
            out: Vec::with_capacity(16 * 1024),
            seq: 0,
            caps: 0,
            stmts: Vec::new(),
            server_version: String::new(),
            connection_id: 0,
            broken: false,
            full_auth_refused: false,
            opts: opts.clone(),
            watch: None,
            last: None,
            types: Vec::new(),
            keeping: false,
            kept: Vec::new(),
            binary: false,
        })
    }

    /// See [`crate::db::protocol::Wire::watch_column`].
    pub fn watch_column(&mut self, col: Option<usize>) {
        self.watch = col;
        self.last = None;
    }

    pub fn last_value(&mut self) -> Option<i64> {
        self.last.take()
    }

    /// See [`crate::db::protocol::Wire::keep_rows`].
    pub fn keep_rows(&mut self, keep: bool) {
        self.keeping = keep;
        self.kept.clear();
    }

    pub fn kept_rows(&mut self) -> Vec<Vec<Option<String>>> {
        std::mem::take(&mut self.kept)
    }

    /// From now on writes report the rows they changed: the connection is
    /// opened again without `CLIENT_FOUND_ROWS` (a capability is agreed at
    /// the handshake only). Statements prepared before are gone.
    pub fn count_changed_rows(&mut self) -> DbResult<()> {
        if self.caps & CLIENT_FOUND_ROWS == 0 {
            return Ok(());
        }
        let opts = Opts {
            found_rows: false,
            ..self.opts.clone()
        };
        *self = WireConn::connect(&opts)?;
        Ok(())
    }

    /// How long a read waits for the server (`None`: for ever).
    pub fn set_read_timeout(&mut self, t: Option<Duration>) {
        self.rd.get_ref().set_read_timeout(t);
    }

    fn read_packet(&mut self) -> DbResult<()> {
        self.buf.clear();
        loop {
            let mut h = [0u8; 4];
            if let Err(e) = self.rd.read_exact(&mut h) {
                self.broken = true;
                return Err(io_err(e));
            }
            let len = u32::from_le_bytes([h[0], h[1], h[2], 0]) as usize;
            self.seq = h[3].wrapping_add(1);
            let start = self.buf.len();
            self.buf.resize(start + len, 0);
            if let Err(e) = self.rd.read_exact(&mut self.buf[start..]) {
                self.broken = true;
                return Err(io_err(e));
            }
            if len < MAX_PACKET {
                return Ok(());
            }
        }
    }

    /// Starts the handshake response: capabilities, largest packet,
    /// character set, 23 reserved bytes. Alone, it is the SSLRequest.
    fn begin_response(&mut self) {
        self.begin_packet();
        self.out.extend_from_slice(&self.caps.to_le_bytes());
        self.out.extend_from_slice(&(16u32 << 20).to_le_bytes());
        self.out.push(CHARSET);
        self.out.extend_from_slice(&[0u8; 23]);
    }

    /// Starts a packet in `out`; the payload follows.
    fn begin_packet(&mut self) {
        self.out.clear();
        self.out.extend_from_slice(&[0, 0, 0, 0]);
    }

    /// Sends the packet in `out` (splitting it if over 16 MB).
    fn send(&mut self) -> DbResult<()> {
        let payload = self.out.len() - 4;
        let r = if payload < MAX_PACKET {
            let h = (payload as u32).to_le_bytes();
            self.out[..3].copy_from_slice(&h[..3]);
            self.out[3] = self.seq;
            self.seq = self.seq.wrapping_add(1);
            self.rd.get_mut().write_all(&self.out)
        } else {
            let data = self.out[4..].to_vec();
            let mut r = Ok(());
            let mut chunks = data.chunks(MAX_PACKET).peekable();
            let mut last_full = false;
            while let Some(chunk) = chunks.next() {
                let mut h = (chunk.len() as u32).to_le_bytes();
                h[3] = self.seq;
                self.seq = self.seq.wrapping_add(1);
                r = r
                    .and_then(|_| self.rd.get_mut().write_all(&h))
                    .and_then(|_| self.rd.get_mut().write_all(chunk));
                last_full = chunk.len() == MAX_PACKET && chunks.peek().is_none();
            }
            if last_full {
                let h = [0, 0, 0, self.seq];
                self.seq = self.seq.wrapping_add(1);
                r = r.and_then(|_| self.rd.get_mut().write_all(&h));
            }
            r
        };
        r.map_err(|e| {
            self.broken = true;
            io_err(e)
        })
    }

    fn command(&mut self, cmd: u8, body: &[u8]) -> DbResult<()> {
        self.binary = false;
        if self.broken {
            return Err(DbError::new(
                ErrorKind::Connection,
                "the connection was lost earlier",
            ));
        }
        self.seq = 0;
        self.begin_packet();
        self.out.push(cmd);
        self.out.extend_from_slice(body);
        self.send()
    }

    /// The error in an ERR packet held in `buf`.
    fn server_error(&self) -> DbError {
        let b = &self.buf;
        let code = if b.len() >= 3 {
            u16::from_le_bytes([b[1], b[2]])
        } else {
            0
        };
        let mut msg_at = 3;
        let mut state = String::new();
        if b.get(3) == Some(&b'#') && b.len() >= 9 {
            state = String::from_utf8_lossy(&b[4..9]).into_owned();
            msg_at = 9;
        }
        let msg = String::from_utf8_lossy(b.get(msg_at..).unwrap_or_default());
        DbError::new(error_kind(code), format!("ERROR {code} ({state}): {msg}"))
            .with_code(Some(super::super::ServerCode::Mysql(code)))
    }

    fn handshake(&mut self, opts: &Opts) -> DbResult<()> {
        self.set_read_timeout(Some(Duration::from_secs(30)));
        self.read_packet()?;
        if self.buf.first() == Some(&0xFF) {
            return Err(self.server_error());
        }
        let b = &self.buf;
        if b.first() != Some(&10) {
            return Err(proto_err(format!(
                "unsupported handshake version {:?}",
                b.first()
            )));
        }
        let mut pos = 1;
        let nul = b[pos..]
            .iter()
            .position(|x| *x == 0)
            .ok_or_else(|| proto_err("bad handshake"))?;
        self.server_version = String::from_utf8_lossy(&b[pos..pos + nul]).into_owned();
        pos += nul + 1;
        let rest = b.get(pos..).ok_or_else(|| proto_err("short handshake"))?;
        if rest.len() < 4 + 8 + 1 + 2 {
            return Err(proto_err("short handshake"));
        }
        self.connection_id = u32::from_le_bytes(rest[0..4].try_into().unwrap());
        let mut seed = rest[4..12].to_vec();
        let mut caps = u16::from_le_bytes([rest[13], rest[14]]) as u32;
        let mut plugin = String::from("mysql_native_password");
        if rest.len() >= 4 + 8 + 1 + 2 + 1 + 2 + 2 + 1 + 10 {
            caps |= (u16::from_le_bytes([rest[18], rest[19]]) as u32) << 16;
            let seed_len = rest[20] as usize;
            let mut p = 21 + 10;
            if caps & CLIENT_SECURE_CONNECTION != 0 {
                let n = 13.max(seed_len.saturating_sub(8));
                if let Some(part) = rest.get(p..p + n) {
                    seed.extend_from_slice(&part[..n - 1]); // ends with NUL
                }
                p += n;
            }
            if caps & CLIENT_PLUGIN_AUTH != 0 {
                if let Some(name) = rest.get(p..) {
                    let end = name.iter().position(|x| *x == 0).unwrap_or(name.len());
                    plugin = String::from_utf8_lossy(&name[..end]).into_owned();
                }
            }
        }
        let want = CLIENT_LONG_PASSWORD
            | if opts.found_rows {
                CLIENT_FOUND_ROWS
            } else {
                0
            }
            | CLIENT_LONG_FLAG
            | CLIENT_LOCAL_FILES
            | CLIENT_PROTOCOL_41
            | CLIENT_TRANSACTIONS
            | CLIENT_SECURE_CONNECTION
            | CLIENT_MULTI_STATEMENTS
            | CLIENT_MULTI_RESULTS
            | CLIENT_PS_MULTI_RESULTS
            | CLIENT_PLUGIN_AUTH
            | CLIENT_PLUGIN_AUTH_LENENC_CLIENT_DATA
            | CLIENT_DEPRECATE_EOF
            | if opts.database.is_some() {
                CLIENT_CONNECT_WITH_DB
            } else {
                0
            };
        self.caps = want & caps;
        if self.caps & CLIENT_PROTOCOL_41 == 0 {
            return Err(proto_err("the server does not speak protocol 4.1"));
        }
        if let (Address::Tcp { host, .. }, false) = (&opts.address, opts.tls.is_off()) {
            if caps & CLIENT_SSL != 0 {
                // SSLRequest: the first 32 bytes of the handshake response,
                // then TLS; the response itself follows encrypted.
                self.caps |= CLIENT_SSL;
                self.begin_response();
                self.send()?;
                stream::start_tls(&mut self.rd, host)?;
            } else if opts.tls == Tls::Required {
                return Err(DbError::new(
                    ErrorKind::Other,
                    format!(
                        "the target asks for tls = \"required\", but the server at {host} does not offer TLS; \
                         give the server a certificate (MySQL makes one at initialisation; MariaDB needs ssl_cert and ssl_key), \
                         or set tls = \"preferred\" or \"off\""
                    ),
                ));
            }
        }
        let password = opts.password.as_deref().unwrap_or("").as_bytes();
        let auth = auth_response(&plugin, password, &seed)?;

        self.begin_response();
        self.out.extend_from_slice(opts.user.as_bytes());
        self.out.push(0);
        if self.caps & CLIENT_PLUGIN_AUTH_LENENC_CLIENT_DATA != 0 {
            put_lenenc(&mut self.out, auth.len() as u64);
        } else {
            self.out.push(auth.len() as u8);
        }
        self.out.extend_from_slice(&auth);
        if let (Some(db), true) = (&opts.database, self.caps & CLIENT_CONNECT_WITH_DB != 0) {
            self.out.extend_from_slice(db.as_bytes());
            self.out.push(0);
        }
        if self.caps & CLIENT_PLUGIN_AUTH != 0 {
            self.out.extend_from_slice(plugin.as_bytes());
            self.out.push(0);
        }
        self.send()?;
        self.finish_auth(password)?;
        self.set_read_timeout(None);
        Ok(())
    }

    fn finish_auth(&mut self, password: &[u8]) -> DbResult<()> {
        loop {
            self.read_packet()?;
            match self.buf.first() {
                Some(0x00) => return Ok(()),
                Some(0xFF) => return Err(self.server_error()),
                Some(0xFE) => {
                    // Auth switch: plugin name, then a new seed.
                    let body = &self.buf[1..];
                    let end = body.iter().position(|x| *x == 0).unwrap_or(body.len());
                    let plugin = String::from_utf8_lossy(&body[..end]).into_owned();
                    let mut seed = body.get(end + 1..).unwrap_or_default().to_vec();
                    if seed.last() == Some(&0) {
                        seed.pop();
                    }
                    let auth = auth_response(&plugin, password, &seed)?;
                    self.begin_packet();
                    self.out.extend_from_slice(&auth);
                    self.send()?;
                }
                Some(0x01) => match self.buf.get(1) {
                    Some(0x03) => {} // fast authentication succeeded; OK follows
                    Some(0x04) => {
                        if self.rd.get_ref().is_tcp() {
                            self.full_auth_refused = true;
                            return Err(DbError::new(
                                ErrorKind::Other,
                                "the server asks for caching_sha2_password's full authentication, \
                                 which sends the password and so needs TLS; set tls = \"required\" on the target, \
                                 or give the server a certificate (MySQL makes one at initialisation)",
                            ));
                        }
                        // A unix socket or TLS is a secure channel: the
                        // password may be sent.
                        self.begin_packet();
                        self.out.extend_from_slice(password);
                        self.out.push(0);
                        self.send()?;
                    }
                    _ => return Err(proto_err("unexpected authentication data")),
                },
                _ => return Err(proto_err("unexpected packet during authentication")),
            }
        }
    }

    fn eof_deprecated(&self) -> bool {
        self.caps & CLIENT_DEPRECATE_EOF != 0
    }

    /// Reads the response to a command: OK, ERR, or result sets whose rows
    /// are counted (and, when `keep` is given, kept as text).
    fn read_result(
        &mut self,
        mut keep: Option<&mut Vec<Vec<Option<String>>>>,
    ) -> DbResult<Outcome> {
        let mut outcome = Outcome::default();
        // A multi-statement's changed rows are its first statement's: the
        // write of LinkBench's `"…; commit"`, not the commit's 0.
        let mut first = true;
        loop {
            self.read_packet()?;
            let status;
            match self.buf.first() {
                Some(0x00) => {
                    let mut pos = 1;
                    let affected = lenenc(&self.buf, &mut pos).unwrap_or(0);
                    if first {
                        outcome.affected = affected;
                    }
                    let _last_id = lenenc(&self.buf, &mut pos);
                    status = self
                        .buf
                        .get(pos..pos + 2)
                        .map_or(0, |s| u16::from_le_bytes([s[0], s[1]]));
                }
                Some(0xFF) => return Err(self.server_error()),
                Some(0xFB) => return Err(proto_err("LOCAL INFILE requests are not supported")),
                _ => {
                    let mut pos = 0;
                    let cols =
                        lenenc(&self.buf, &mut pos).ok_or_else(|| proto_err("bad column count"))?;
                    self.types.clear();
                    for _ in 0..cols {
                        self.read_packet()?;
                        if self.watch.is_some() || self.keeping {
                            self.types.push(column_type(&self.buf));
                        }
                    }
                    if !self.eof_deprecated() {
                        self.read_packet()?;
                    }
                    loop {
                        self.read_packet()?;
                        match self.buf.first() {
                            Some(0xFE) if self.buf.len() < MAX_PACKET => {
                                status = if self.eof_deprecated() {
                                    let mut p = 1;
                                    let _ = lenenc(&self.buf, &mut p);
                                    let _ = lenenc(&self.buf, &mut p);
                                    self.buf
                                        .get(p..p + 2)
                                        .map_or(0, |s| u16::from_le_bytes([s[0], s[1]]))
                                } else {
                                    self.buf
                                        .get(3..5)
                                        .map_or(0, |s| u16::from_le_bytes([s[0], s[1]]))
                                };
                                break;
                            }
                            Some(0xFF) => return Err(self.server_error()),
                            _ => {
                                outcome.rows += 1;
                                if let Some(col) = self.watch {
                                    self.last = if self.binary {
                                        binary_int(&self.buf, &self.types, col)
                                    } else {
                                        text_row(&self.buf, col + 1)
                                            .pop()
                                            .flatten()
                                            .and_then(|v| v.parse().ok())
                                    };
                                }
                                if let Some(rows) = keep.as_deref_mut() {
                                    rows.push(text_row(&self.buf, cols as usize));
                                } else if self.keeping {
                                    self.kept.push(if self.binary {
                                        binary_row(&self.buf, &self.types)
                                    } else {
                                        text_row(&self.buf, cols as usize)
                                    });
                                }
                            }
                        }
                    }
                }
            }
            if status & SERVER_MORE_RESULTS_EXISTS == 0 {
                return Ok(outcome);
            }
            first = false;
        }
    }

    /// Runs SQL text (one or more statements) and returns its rows as text.
    /// For metadata and maintenance, not the hot path.
    pub fn query_text(&mut self, sql: &str) -> DbResult<Vec<Vec<Option<String>>>> {
        self.command(COM_QUERY, sql.as_bytes())?;
        let mut rows = Vec::new();
        self.read_result(Some(&mut rows))?;
        Ok(rows)
    }

    /// Runs SQL text, discarding rows.
    pub fn execute_text(&mut self, sql: &str) -> DbResult<Outcome> {
        self.command(COM_QUERY, sql.as_bytes())?;
        self.read_result(None)
    }

    pub fn prepare(&mut self, sql: &str) -> DbResult<usize> {
        self.command(COM_STMT_PREPARE, sql.as_bytes())?;
        self.read_packet()?;
        if self.buf.first() == Some(&0xFF) {
            return Err(self.server_error());
        }
        if self.buf.len() < 9 {
            return Err(proto_err("short COM_STMT_PREPARE response"));
        }
        let id = u32::from_le_bytes(self.buf[1..5].try_into().unwrap());
        let cols = u16::from_le_bytes([self.buf[5], self.buf[6]]) as usize;
        let params = u16::from_le_bytes([self.buf[7], self.buf[8]]) as usize;
        for n in [params, cols] {
            if n > 0 {
                for _ in 0..n {
                    self.read_packet()?;
                }
                if !self.eof_deprecated() {
                    self.read_packet()?;
                }
            }
        }
        self.stmts.push(Prepared { id, params });
        Ok(self.stmts.len() - 1)
    }

    /// Runs `LOAD DATA LOCAL INFILE` (`sql`), streaming the file's content
    /// from `fill` in packets. `Ok(None)`: the server refused local infile
    /// before any data was sent.
    pub fn load_data_local(
        &mut self,
        sql: &str,
        fill: &mut dyn FnMut(&mut Vec<u8>) -> bool,
    ) -> DbResult<Option<u64>> {
        self.command(COM_QUERY, sql.as_bytes())?;
        self.read_packet()?;
        match self.buf.first() {
            Some(0xFB) => {}
            // Local infile is off: 1148 (MariaDB before 10.6, MySQL 5.x),
            // 3948 (MySQL 8 and later), 4166 (MariaDB 10.6 and later,
            // ER_LOAD_INFILE_CAPABILITY_DISABLED).
            Some(0xFF)
                if matches!(
                    u16::from_le_bytes([self.buf[1], self.buf[2]]),
                    1148 | 3948 | 4166
                ) =>
            {
                return Ok(None);
            }
            Some(0xFF) => return Err(self.server_error()),
            _ => return Err(proto_err("expected a LOCAL INFILE request")),
        }
        const CHUNK: usize = 1 << 20;
        let mut more = true;
        while more {
            self.begin_packet();
            while more && self.out.len() < CHUNK {
                more = fill(&mut self.out);
            }
            if self.out.len() > 4 {
                self.send()?;
            }
        }
        self.begin_packet(); // an empty packet ends the file
        self.send()?;
        self.read_result(None).map(|o| Some(o.affected))
    }

    /// Executes a prepared statement with the binary protocol.
    pub fn execute(&mut self, stmt: usize, params: &[Param<'_>]) -> DbResult<Outcome> {
        let Some(p) = self.stmts.get(stmt) else {
            return Err(proto_err("unknown statement"));
        };
        if p.params != params.len() {
            return Err(DbError::new(
                ErrorKind::Other,
                format!(
                    "statement takes {} parameters, {} given",
                    p.params,
                    params.len()
                ),
            ));
        }
        if self.broken {
            return Err(DbError::new(
                ErrorKind::Connection,
                "the connection was lost earlier",
            ));
        }
        let id = p.id;
        self.seq = 0;
        self.binary = true;
        self.begin_packet();
        self.out.push(COM_STMT_EXECUTE);
        self.out.extend_from_slice(&id.to_le_bytes());
        self.out.push(0); // no cursor
        self.out.extend_from_slice(&1u32.to_le_bytes());
        if !params.is_empty() {
            let bitmap = params.len().div_ceil(8);
            self.out.resize(self.out.len() + bitmap, 0); // no NULLs
            self.out.push(1); // types follow
            for prm in params {
                let t = match prm {
                    Param::Int(_) => MYSQL_TYPE_LONGLONG,
                    Param::Str(_) => MYSQL_TYPE_VAR_STRING,
                };
                self.out.extend_from_slice(&[t, 0]);
            }
            for prm in params {
                match prm {
                    Param::Int(v) => self.out.extend_from_slice(&v.to_le_bytes()),
                    Param::Str(s) => {
                        put_lenenc(&mut self.out, s.len() as u64);
                        self.out.extend_from_slice(s.as_bytes());
                    }
                }
            }
        }
        self.send()?;
        self.read_result(None)
    }
}

impl WireConn {
    /// The connection's TCP socket, the capabilities agreed and its
    /// statements' ids, for `examples/client_floor.rs`: a client that does
    /// nothing but send a prepared statement's bytes and read the reply,
    /// the floor relbench's client is measured against. `None` over TLS or
    /// a unix socket.
    pub fn into_raw(mut self) -> Option<(std::net::TcpStream, u32, Vec<u32>)> {
        let ids = self.stmts.iter().map(|p| p.id).collect();
        let caps = self.caps;
        // No COM_QUIT when dropped: the socket lives on.
        self.broken = true;
        let rd = std::mem::replace(&mut self.rd, BufReader::new(Stream::Detached));
        match rd.into_inner() {
            Stream::Tcp(s) => Some((s, caps, ids)),
            _ => None,
        }
    }
}

impl Drop for WireConn {
    fn drop(&mut self) {
        if !self.broken {
            let _ = self.command(COM_QUIT, &[]);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_codes_map_to_kinds() {
        assert_eq!(error_kind(1213), ErrorKind::Deadlock);
        assert_eq!(error_kind(1205), ErrorKind::Busy);
        assert_eq!(error_kind(1062), ErrorKind::Constraint);
        assert_eq!(error_kind(1114), ErrorKind::DiskFull);
        assert_eq!(error_kind(1146), ErrorKind::Other);
    }
}
