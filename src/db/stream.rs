//! A client socket, TCP or unix, for the wire-protocol clients.

use std::io::{self, BufReader, Read, Write};
use std::net::TcpStream;
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::time::Duration;

use super::tls::{self, TlsStream};
use super::{DbError, DbResult, ErrorKind};

pub enum Stream {
    Tcp(TcpStream),
    Unix(UnixStream),
    /// Boxed: the TLS state is large, and most connections are plain.
    Tls(Box<TlsStream>),
    /// Nothing: a placeholder while a connection switches to TLS.
    Detached,
}

impl Stream {
    pub fn tcp(host: &str, port: u16) -> DbResult<Stream> {
        let s = TcpStream::connect((host, port)).map_err(|e| {
            DbError::new(
                ErrorKind::Connection,
                format!("cannot connect to {host}:{port}: {e}"),
            )
        })?;
        // Every statement is one small message; Nagle would hold it back.
        s.set_nodelay(true)
            .map_err(|e| DbError::new(ErrorKind::Connection, e.to_string()))?;
        Ok(Stream::Tcp(s))
    }

    pub fn unix(path: &Path) -> DbResult<Stream> {
        UnixStream::connect(path).map(Stream::Unix).map_err(|e| {
            DbError::new(
                ErrorKind::Connection,
                format!("cannot connect to {}: {e}", path.display()),
            )
        })
    }

    /// Switches a TCP connection to TLS, once the server has agreed.
    fn into_tls(self, host: &str) -> DbResult<Stream> {
        match self {
            Stream::Tcp(s) => Ok(Stream::Tls(Box::new(tls::handshake(s, host)?))),
            Stream::Unix(_) => Err(DbError::new(
                ErrorKind::Connection,
                "TLS is for TCP connections, not a unix socket",
            )),
            Stream::Tls(_) | Stream::Detached => Ok(self),
        }
    }

    pub fn is_tcp(&self) -> bool {
        matches!(self, Stream::Tcp(_))
    }

    /// Bounds the wait for the server during the handshake.
    pub fn set_read_timeout(&self, t: Option<Duration>) {
        let _ = match self {
            Stream::Tcp(s) => s.set_read_timeout(t),
            Stream::Unix(s) => s.set_read_timeout(t),
            Stream::Tls(s) => s.sock.set_read_timeout(t),
            Stream::Detached => Ok(()),
        };
    }
}

/// Switches a buffered connection to TLS, once the server has agreed
/// (MySQL's SSLRequest, PostgreSQL's 'S'). The buffer must be empty: bytes
/// the server sent in the clear before the handshake would be lost.
pub fn start_tls(rd: &mut BufReader<Stream>, host: &str) -> DbResult<()> {
    if !rd.buffer().is_empty() {
        return Err(DbError::new(
            ErrorKind::Connection,
            "protocol error: the server sent data before the TLS handshake",
        ));
    }
    let capacity = rd.capacity();
    let plain = std::mem::replace(rd, BufReader::with_capacity(0, Stream::Detached)).into_inner();
    *rd = BufReader::with_capacity(capacity, plain.into_tls(host)?);
    Ok(())
}

impl Read for Stream {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Stream::Tcp(s) => s.read(buf),
            Stream::Unix(s) => s.read(buf),
            Stream::Tls(s) => s.read(buf),
            Stream::Detached => Ok(0),
        }
    }
}

impl Write for Stream {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Stream::Tcp(s) => s.write(buf),
            Stream::Unix(s) => s.write(buf),
            Stream::Tls(s) => s.write(buf),
            Stream::Detached => Err(io::ErrorKind::NotConnected.into()),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match self {
            Stream::Tls(s) => s.flush(),
            _ => Ok(()),
        }
    }
}
