//! A lean, synchronous PostgreSQL frontend/backend protocol client (3.0).
//!
//! Why not the `postgres` crate: it runs tokio inside, and was measured on
//! these machines at about 1.1× sysbench's client CPU per point query
//! (before this client was written), where relbench must stay below 0.9×.
//! This client keeps one
//! buffered socket, prepares each statement once (Parse), then executes it
//! with one round trip (Bind + Execute + Sync), parameters in text format so
//! the server infers their types, and counts DataRow messages without
//! decoding them. `postgres-protocol` supplies only the MD5 and SCRAM
//! authentication. `bench/` measures the outcome against sysbench.

use std::io::{self, BufReader, Read, Write};
use std::path::PathBuf;
use std::time::Duration;

use postgres_protocol::authentication::{md5_hash, sasl};

use crate::db::protocol::Outcome;
use crate::db::spec::Auth;
use crate::db::stream::{self, Stream};
use crate::db::tls::Tls;
use crate::db::{DbError, DbResult, ErrorKind, Param};

#[derive(Debug, Clone, PartialEq)]
pub enum Address {
    Tcp {
        host: String,
        port: u16,
    },
    /// The directory that holds `.s.PGSQL.<port>`, and the port.
    Socket {
        dir: PathBuf,
        port: u16,
    },
}

#[derive(Clone)]
pub struct Opts {
    pub address: Address,
    pub user: String,
    pub password: Option<String>,
    pub database: String,
    /// Whether TCP connections are encrypted.
    pub tls: Tls,
    /// The weakest password exchange the server may ask for.
    pub auth: Auth,
}

/// Refuses a server that asks for a weaker password exchange than the
/// target allows, before anything of the password is sent.
fn refuse_weaker(opts: &Opts, asked: Auth) -> DbResult<()> {
    if opts.auth.allows(asked) {
        return Ok(());
    }
    let how = match asked {
        Auth::Password => {
            "the password in cleartext, which whoever answers at this address could read"
        }
        _ => "an MD5 hash of the password, which whoever answers at this address could replay",
    };
    Err(DbError::new(
        ErrorKind::Connection,
        format!(
            "the server asks for {how}; relbench sent nothing. Configure scram-sha-256 for this user in the \
             server's pg_hba.conf, or, if you trust the server and the network, set auth = \"{}\" on the target",
            asked.name()
        ),
    ))
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

pub struct WireConn {
    rd: BufReader<Stream>,
    /// Payload of the last message read; `tag` is its type byte.
    buf: Vec<u8>,
    tag: u8,
    out: Vec<u8>,
    /// Number of parameters of each prepared statement (named `s<index>`).
    stmts: Vec<usize>,
    pub server_version: String,
    broken: bool,
    /// A column whose value each row is read for, the last row's kept.
    watch: Option<usize>,
    last: Option<i64>,
    /// Rows of the commands run while [`WireConn::keep_rows`] is on.
    keeping: bool,
    kept: Vec<Vec<Option<String>>>,
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

/// Maps a SQLSTATE to what the engine should do about it.
pub fn error_kind(code: &str) -> ErrorKind {
    match code {
        "40P01" | "40001" => ErrorKind::Deadlock,
        "55P03" | "57014" => ErrorKind::Busy,
        "53100" => ErrorKind::DiskFull,
        c if c.starts_with("23") => ErrorKind::Constraint,
        c if c.starts_with("08") || c.starts_with("57P") => ErrorKind::Connection,
        _ => ErrorKind::Other,
    }
}

/// Starts a frontend message: type byte and a length to patch in `end`.
fn begin(out: &mut Vec<u8>, tag: u8) -> usize {
    out.push(tag);
    let at = out.len();
    out.extend_from_slice(&[0, 0, 0, 0]);
    at
}

fn end(out: &mut [u8], at: usize) {
    let len = (out.len() - at) as u32;
    out[at..at + 4].copy_from_slice(&len.to_be_bytes());
}

fn cstr(out: &mut Vec<u8>, s: &str) {
    out.extend_from_slice(s.as_bytes());
    out.push(0);
}

/// Ends a Bind begun at `at` (its results asked for in text) and executes
/// its unnamed portal, every row.
#[inline]
fn execute_portal(out: &mut Vec<u8>, at: usize) {
    out.extend_from_slice(&0u16.to_be_bytes()); // results in text
    end(out, at);
    out.extend_from_slice(&[b'E', 0, 0, 0, 9, 0, 0, 0, 0, 0]);
}

impl WireConn {
    pub fn connect(opts: &Opts) -> DbResult<Self> {
        let stream = match &opts.address {
            Address::Tcp { host, port } => Stream::tcp(host, *port)?,
            Address::Socket { dir, port } => Stream::unix(&dir.join(format!(".s.PGSQL.{port}")))?,
        };
        let mut c = WireConn {
            rd: BufReader::with_capacity(64 * 1024, stream),
            buf: Vec::with_capacity(64 * 1024),
            tag: 0,
            out: Vec::with_capacity(16 * 1024),
            stmts: Vec::new(),
            server_version: String::new(),
            broken: false,
            watch: None,
            last: None,
            keeping: false,
            kept: Vec::new(),
        };
        c.startup(opts)?;
        Ok(c)
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

    /// How long a read waits for the server (`None`: for ever).
    pub fn set_read_timeout(&mut self, t: Option<Duration>) {
        self.rd.get_ref().set_read_timeout(t);
    }

    fn read_msg(&mut self) -> DbResult<u8> {
        let mut h = [0u8; 5];
        if let Err(e) = self.rd.read_exact(&mut h) {
            self.broken = true;
            return Err(io_err(e));
        }
        let len = u32::from_be_bytes([h[1], h[2], h[3], h[4]]) as usize;
        self.buf.clear();
        self.buf.resize(len.saturating_sub(4), 0);
        if let Err(e) = self.rd.read_exact(&mut self.buf) {
            self.broken = true;
            return Err(io_err(e));
        }
        self.tag = h[0];
        Ok(h[0])
    }

    fn flush_out(&mut self) -> DbResult<()> {
        if self.broken {
            return Err(DbError::new(
                ErrorKind::Connection,
                "the connection was lost earlier",
            ));
        }
        let r = self.rd.get_mut().write_all(&self.out);
        self.out.clear();
        r.map_err(|e| {
            self.broken = true;
            io_err(e)
        })
    }

    /// The error in an ErrorResponse held in `buf`.
    fn server_error(&self) -> DbError {
        let (mut code, mut msg, mut detail) = (String::new(), String::new(), String::new());
        for field in self.buf.split(|b| *b == 0) {
            let Some((&t, v)) = field.split_first() else {
                continue;
            };
            let v = String::from_utf8_lossy(v).into_owned();
            match t {
                b'C' => code = v,
                b'M' => msg = v,
                b'D' => detail = v,
                _ => {}
            }
        }
        let detail = if detail.is_empty() {
            String::new()
        } else {
            format!(" ({detail})")
        };
        DbError::new(error_kind(&code), format!("ERROR {code}: {msg}{detail}"))
            .with_code(super::super::ServerCode::sqlstate(&code))
    }

    /// SSLRequest, then TLS if the server answers 'S'.
    fn start_tls(&mut self, host: &str, tls: Tls) -> DbResult<()> {
        self.out.extend_from_slice(&8u32.to_be_bytes());
        self.out.extend_from_slice(&80_877_103u32.to_be_bytes());
        self.flush_out()?;
        let mut answer = [0u8; 1];
        self.rd.read_exact(&mut answer).map_err(io_err)?;
        match answer[0] {
            b'S' => {
                stream::start_tls(&mut self.rd, host)?;
                Ok(())
            }
            b'N' if tls == Tls::Preferred => Ok(()),
            b'N' => Err(DbError::new(
                ErrorKind::Other,
                format!(
                    "the target asks for tls = \"required\", but the server at {host} does not offer TLS; \
                     set ssl = on with ssl_cert_file and ssl_key_file on the server, or tls = \"preferred\" or \"off\""
                ),
            )),
            other => Err(proto_err(format!("unexpected answer {other} to SSLRequest"))),
        }
    }

    fn startup(&mut self, opts: &Opts) -> DbResult<()> {
        self.set_read_timeout(Some(Duration::from_secs(30)));
        if let (Address::Tcp { host, .. }, false) = (&opts.address, opts.tls.is_off()) {
            self.start_tls(host, opts.tls)?;
        }
        let mut body = Vec::new();
        body.extend_from_slice(&196_608u32.to_be_bytes()); // protocol 3.0
        for (k, v) in [
            ("user", opts.user.as_str()),
            ("database", &opts.database),
            ("application_name", "relbench"),
        ] {
            cstr(&mut body, k);
            cstr(&mut body, v);
        }
        body.push(0);
        self.out
            .extend_from_slice(&((body.len() + 4) as u32).to_be_bytes());
        self.out.extend_from_slice(&body);
        self.flush_out()?;
        let password = opts.password.clone().unwrap_or_default();
        let mut scram: Option<sasl::ScramSha256> = None;
        loop {
            match self.read_msg()? {
                b'R' => {
                    let code = u32::from_be_bytes(
                        self.buf[..4]
                            .try_into()
                            .map_err(|_| proto_err("short auth"))?,
                    );
                    match code {
                        0 => {}
                        3 => {
                            refuse_weaker(opts, Auth::Password)?;
                            let at = begin(&mut self.out, b'p');
                            cstr(&mut self.out, &password);
                            end(&mut self.out, at);
                            self.flush_out()?;
                        }
                        5 => {
                            refuse_weaker(opts, Auth::Md5)?;
                            let salt: [u8; 4] = self.buf[4..8].try_into().map_err(|_| proto_err("short salt"))?;
                            let h = md5_hash(opts.user.as_bytes(), password.as_bytes(), salt);
                            let at = begin(&mut self.out, b'p');
                            cstr(&mut self.out, &h);
                            end(&mut self.out, at);
                            self.flush_out()?;
                        }
                        10 => {
                            let mechs = &self.buf[4..];
                            if !mechs.split(|b| *b == 0).any(|m| m == b"SCRAM-SHA-256") {
                                return Err(proto_err("the server offers no SASL mechanism relbench speaks"));
                            }
                            let s = sasl::ScramSha256::new(password.as_bytes(), sasl::ChannelBinding::unsupported());
                            let at = begin(&mut self.out, b'p');
                            cstr(&mut self.out, "SCRAM-SHA-256");
                            self.out.extend_from_slice(&(s.message().len() as i32).to_be_bytes());
                            self.out.extend_from_slice(s.message());
                            end(&mut self.out, at);
                            self.flush_out()?;
                            scram = Some(s);
                        }
                        11 => {
                            let s = scram.as_mut().ok_or_else(|| proto_err("SASL continue without a start"))?;
                            s.update(&self.buf[4..]).map_err(|e| DbError::new(ErrorKind::Connection, format!("SCRAM: {e}")))?;
                            let at = begin(&mut self.out, b'p');
                            self.out.extend_from_slice(s.message());
                            end(&mut self.out, at);
                            self.flush_out()?;
                        }
                        12 => {
                            let mut s = scram.take().ok_or_else(|| proto_err("SASL final without a start"))?;
                            s.finish(&self.buf[4..]).map_err(|e| DbError::new(ErrorKind::Connection, format!("SCRAM: {e}")))?;
                        }
                        other => {
                            return Err(DbError::new(
                                ErrorKind::Connection,
                                format!("the server asks for authentication method {other}, which relbench does not speak"),
                            ))
                        }
                    }
                }
                b'S' => {
                    let mut parts = self.buf.split(|b| *b == 0);
                    if parts.next() == Some(b"server_version") {
                        self.server_version =
                            String::from_utf8_lossy(parts.next().unwrap_or_default()).into_owned();
                    }
                }
                b'E' => return Err(self.server_error()),
                b'Z' => break,
                _ => {} // BackendKeyData, notices
            }
        }
        self.set_read_timeout(None);
        Ok(())
    }

    /// Reads messages until ReadyForQuery, counting rows; the first error is
    /// returned once the server is ready again.
    fn read_until_ready(
        &mut self,
        mut keep: Option<&mut Vec<Vec<Option<String>>>>,
    ) -> DbResult<Outcome> {
        let mut o = Outcome::default();
        let mut err = None;
        loop {
            match self.read_msg()? {
                b'D' => {
                    o.rows += 1;
                    if let Some(col) = self.watch {
                        self.last = text_int(&self.buf, col);
                    }
                    if let Some(rows) = keep.as_deref_mut() {
                        rows.push(text_row(&self.buf));
                    } else if self.keeping {
                        // Results come as text: what the server sent.
                        self.kept.push(text_row(&self.buf));
                    }
                }
                b'C' => {
                    // "UPDATE 3", "INSERT 0 1", "SELECT 5", "COPY 100"
                    let tag = &self.buf[..self.buf.len().saturating_sub(1)];
                    o.affected = tag
                        .rsplit(|b| *b == b' ')
                        .next()
                        .and_then(|n| std::str::from_utf8(n).ok())
                        .and_then(|n| n.parse().ok())
                        .unwrap_or(0);
                }
                b'E' => {
                    err.get_or_insert_with(|| self.server_error());
                }
                b'Z' => break,
                b'G' => {
                    // A COPY FROM STDIN we did not start: refuse it.
                    let at = begin(&mut self.out, b'f');
                    cstr(&mut self.out, "relbench does not send COPY data here");
                    end(&mut self.out, at);
                    self.flush_out()?;
                }
                _ => {} // ParseComplete, BindComplete, RowDescription, NoData, notices
            }
        }
        match err {
            Some(e) => Err(e),
            None => Ok(o),
        }
    }

    /// Runs SQL text (the simple query protocol) and returns the rows as text.
    pub fn query_text(&mut self, sql: &str) -> DbResult<Vec<Vec<Option<String>>>> {
        let at = begin(&mut self.out, b'Q');
        cstr(&mut self.out, sql);
        end(&mut self.out, at);
        self.flush_out()?;
        let mut rows = Vec::new();
        self.read_until_ready(Some(&mut rows))?;
        Ok(rows)
    }

    pub fn execute_text(&mut self, sql: &str) -> DbResult<Outcome> {
        let at = begin(&mut self.out, b'Q');
        cstr(&mut self.out, sql);
        end(&mut self.out, at);
        self.flush_out()?;
        self.read_until_ready(None)
    }

    /// Runs statements whose values are bound, never written into their
    /// text (the extended protocol, unnamed statement and portal, every
    /// value as text or NULL, its type the server's inference), all in one
    /// write and one Sync: one round trip for the lot. Rows come back as
    /// text. After an error the server skips the rest until the Sync, and
    /// the first error is returned.
    pub fn run_bound<'a>(
        &mut self,
        stmts: impl IntoIterator<Item = (&'a str, &'a [Option<&'a str>])>,
    ) -> DbResult<Vec<Vec<Option<String>>>> {
        for (sql, params) in stmts {
            let at = begin(&mut self.out, b'P');
            cstr(&mut self.out, "");
            cstr(&mut self.out, sql);
            self.out.extend_from_slice(&0u16.to_be_bytes());
            end(&mut self.out, at);
            let at = begin(&mut self.out, b'B');
            cstr(&mut self.out, "");
            cstr(&mut self.out, "");
            self.out.extend_from_slice(&0u16.to_be_bytes()); // all parameters in text
            let n = u16::try_from(params.len())
                .map_err(|_| proto_err("more than 65,535 values in one statement"))?;
            self.out.extend_from_slice(&n.to_be_bytes());
            for p in params {
                match p {
                    Some(v) => {
                        let len =
                            u32::try_from(v.len()).map_err(|_| proto_err("a value over 4 GiB"))?;
                        self.out.extend_from_slice(&len.to_be_bytes());
                        self.out.extend_from_slice(v.as_bytes());
                    }
                    None => self.out.extend_from_slice(&(-1i32).to_be_bytes()),
                }
            }
            execute_portal(&mut self.out, at);
        }
        self.out.extend_from_slice(&[b'S', 0, 0, 0, 4]);
        self.flush_out()?;
        let mut rows = Vec::new();
        self.read_until_ready(Some(&mut rows))?;
        Ok(rows)
    }

    pub fn prepare(&mut self, sql: &str) -> DbResult<usize> {
        let idx = self.stmts.len();
        let at = begin(&mut self.out, b'P');
        cstr(&mut self.out, &format!("s{idx}"));
        cstr(&mut self.out, sql);
        self.out.extend_from_slice(&0u16.to_be_bytes()); // the server infers types
        end(&mut self.out, at);
        let at = begin(&mut self.out, b'D');
        self.out.push(b'S');
        cstr(&mut self.out, &format!("s{idx}"));
        end(&mut self.out, at);
        let at = begin(&mut self.out, b'S');
        end(&mut self.out, at);
        self.flush_out()?;
        let mut params = None;
        let mut err = None;
        loop {
            match self.read_msg()? {
                b't' => params = Some(u16::from_be_bytes([self.buf[0], self.buf[1]]) as usize),
                b'E' => {
                    err.get_or_insert_with(|| self.server_error());
                }
                b'Z' => break,
                _ => {}
            }
        }
        if let Some(e) = err {
            return Err(e);
        }
        self.stmts.push(params.unwrap_or(0));
        Ok(idx)
    }

    /// Executes a prepared statement: Bind, Execute and Sync in one write.
    pub fn execute(&mut self, stmt: usize, params: &[Param<'_>]) -> DbResult<Outcome> {
        let Some(&n) = self.stmts.get(stmt) else {
            return Err(proto_err("unknown statement"));
        };
        if n != params.len() {
            return Err(DbError::new(
                ErrorKind::Other,
                format!("statement takes {n} parameters, {} given", params.len()),
            ));
        }
        let at = begin(&mut self.out, b'B');
        self.out.push(0); // unnamed portal
        self.out.push(b's');
        write_decimal(&mut self.out, stmt as i64);
        self.out.push(0);
        self.out.extend_from_slice(&0u16.to_be_bytes()); // all parameters in text
        self.out
            .extend_from_slice(&(params.len() as u16).to_be_bytes());
        for p in params {
            let len_at = self.out.len();
            self.out.extend_from_slice(&[0, 0, 0, 0]);
            match p {
                Param::Int(v) => write_decimal(&mut self.out, *v),
                Param::Str(s) => self.out.extend_from_slice(s.as_bytes()),
            }
            let len = (self.out.len() - len_at - 4) as u32;
            self.out[len_at..len_at + 4].copy_from_slice(&len.to_be_bytes());
        }
        execute_portal(&mut self.out, at);
        self.out.extend_from_slice(&[b'S', 0, 0, 0, 4]);
        self.flush_out()?;
        self.read_until_ready(None)
    }

    /// `COPY … FROM STDIN`, streaming the data from `fill`.
    pub fn copy_in(
        &mut self,
        sql: &str,
        fill: &mut dyn FnMut(&mut Vec<u8>) -> bool,
    ) -> DbResult<u64> {
        let at = begin(&mut self.out, b'Q');
        cstr(&mut self.out, sql);
        end(&mut self.out, at);
        self.flush_out()?;
        loop {
            match self.read_msg()? {
                b'G' => break,
                b'E' => {
                    let e = self.server_error();
                    self.read_until_ready(None)?;
                    return Err(e);
                }
                _ => {}
            }
        }
        const CHUNK: usize = 1 << 20;
        let mut more = true;
        while more {
            let at = begin(&mut self.out, b'd');
            while more && self.out.len() < CHUNK {
                more = fill(&mut self.out);
            }
            end(&mut self.out, at);
            self.flush_out()?;
        }
        let at = begin(&mut self.out, b'c');
        end(&mut self.out, at);
        self.flush_out()?;
        self.read_until_ready(None).map(|o| o.affected)
    }
}

/// Writes an integer in decimal without allocating.
fn write_decimal(out: &mut Vec<u8>, v: i64) {
    let mut tmp = [0u8; 20];
    let mut i = tmp.len();
    let neg = v < 0;
    let mut u = v.unsigned_abs();
    loop {
        i -= 1;
        tmp[i] = b'0' + (u % 10) as u8;
        u /= 10;
        if u == 0 {
            break;
        }
    }
    if neg {
        out.push(b'-');
    }
    out.extend_from_slice(&tmp[i..]);
}

/// Column `col` of a DataRow in text format as an integer (`None` for
/// NULL or text that is not one).
fn text_int(buf: &[u8], col: usize) -> Option<i64> {
    let mut pos = 2;
    for i in 0..=col {
        let len = i32::from_be_bytes(buf.get(pos..pos + 4)?.try_into().ok()?);
        pos += 4;
        if i == col {
            let v = buf.get(pos..pos + usize::try_from(len).ok()?)?;
            return std::str::from_utf8(v).ok()?.parse().ok();
        }
        pos += usize::try_from(len).unwrap_or(0);
    }
    None
}

fn text_row(buf: &[u8]) -> Vec<Option<String>> {
    let n = u16::from_be_bytes([buf[0], buf[1]]) as usize;
    let mut pos = 2;
    (0..n)
        .map(|_| {
            let len = i32::from_be_bytes(buf[pos..pos + 4].try_into().unwrap());
            pos += 4;
            if len < 0 {
                return None;
            }
            let s = String::from_utf8_lossy(&buf[pos..pos + len as usize]).into_owned();
            pos += len as usize;
            Some(s)
        })
        .collect()
}

impl WireConn {
    /// The connection's TCP socket, for `examples/client_floor.rs` (its
    /// statements are named `s0`, `s1`, …). `None` over TLS or a unix
    /// socket.
    pub fn into_raw(mut self) -> Option<std::net::TcpStream> {
        // No Terminate when dropped: the socket lives on.
        self.broken = true;
        let rd = std::mem::replace(&mut self.rd, BufReader::new(Stream::Detached));
        match rd.into_inner() {
            Stream::Tcp(s) => Some(s),
            _ => None,
        }
    }
}

impl Drop for WireConn {
    fn drop(&mut self) {
        if !self.broken {
            self.out.clear();
            self.out.extend_from_slice(&[b'X', 0, 0, 0, 4]);
            let _ = self.flush_out();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decimals_are_written_without_formatting() {
        for v in [0i64, 7, -7, 1234567890, i64::MIN, i64::MAX] {
            let mut out = Vec::new();
            write_decimal(&mut out, v);
            assert_eq!(String::from_utf8(out).unwrap(), v.to_string());
        }
    }

    #[test]
    fn sqlstates_map_to_kinds() {
        assert_eq!(error_kind("40P01"), ErrorKind::Deadlock);
        assert_eq!(error_kind("23505"), ErrorKind::Constraint);
        assert_eq!(error_kind("57P01"), ErrorKind::Connection);
        assert_eq!(error_kind("42P01"), ErrorKind::Other);
    }
}
