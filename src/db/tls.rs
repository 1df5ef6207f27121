//! TLS for the wire clients: whether a target asks for it, and the
//! handshake over an open TCP connection.
//!
//! The server's certificate is not verified, as MySQL's `ssl-mode=REQUIRED`
//! and libpq's `sslmode=require` do not: the point is an encrypted channel
//! (for caching_sha2_password's full authentication, or to measure what
//! encryption costs), and the servers benchmarked here mostly carry
//! self-signed certificates made at initialisation. The handshake's
//! signatures are still checked, so the channel is the server's.

use std::net::TcpStream;
use std::sync::{Arc, OnceLock};

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::{verify_tls12_signature, verify_tls13_signature, CryptoProvider};
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{ClientConfig, ClientConnection, DigitallySignedStruct, SignatureScheme, StreamOwned};
use serde::{Deserialize, Serialize};

use super::{DbError, DbResult, ErrorKind};

/// A target's `tls`: whether its TCP connections are encrypted.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Tls {
    /// Plain TCP, as sysbench runs by default. A MySQL 8+ account whose
    /// password the server has not cached yet is still authenticated over
    /// TLS once (see `mysql::wire`), then connects plain.
    #[default]
    Off,
    /// TLS when the server offers it, plain otherwise.
    Preferred,
    /// TLS, or no connection.
    Required,
}

impl Tls {
    pub const NAMES: [&'static str; 3] = ["off", "preferred", "required"];

    pub fn parse(s: &str) -> Option<Tls> {
        match s {
            "off" => Some(Tls::Off),
            "preferred" => Some(Tls::Preferred),
            "required" => Some(Tls::Required),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        Tls::NAMES[self as usize]
    }

    /// How a target's clients reach a server over TCP, as recorded with it:
    /// "tcp 127.0.0.1:3306", or "tcp 127.0.0.1:3306, tls required".
    pub fn tcp_transport(self, host: &str, port: u16) -> String {
        match self {
            Tls::Off => format!("tcp {host}:{port}"),
            mode => format!("tcp {host}:{port}, tls {}", mode.name()),
        }
    }

    pub fn is_off(&self) -> bool {
        *self == Tls::Off
    }
}

pub type TlsStream = StreamOwned<ClientConnection, TcpStream>;

/// Accepts any certificate; checks the handshake's signatures with it.
#[derive(Debug)]
struct Unverified(Arc<CryptoProvider>);

impl ServerCertVerifier for Unverified {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        verify_tls12_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        verify_tls13_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}

/// One client configuration for the process: building it is not free,
/// and every connection would otherwise repeat it.
fn config() -> DbResult<Arc<ClientConfig>> {
    static CONFIG: OnceLock<Result<Arc<ClientConfig>, rustls::Error>> = OnceLock::new();
    CONFIG
        .get_or_init(|| {
            let provider = Arc::new(rustls::crypto::ring::default_provider());
            let cfg = ClientConfig::builder_with_provider(provider.clone())
                .with_safe_default_protocol_versions()?
                .dangerous()
                .with_custom_certificate_verifier(Arc::new(Unverified(provider)))
                .with_no_client_auth();
            Ok(Arc::new(cfg))
        })
        .clone()
        .map_err(|e| DbError::new(ErrorKind::Connection, format!("setting up TLS: {e}")))
}

/// Runs the TLS handshake over `tcp`, which the server has agreed to
/// switch (MySQL's SSLRequest, PostgreSQL's 'S').
pub fn handshake(tcp: TcpStream, host: &str) -> DbResult<TlsStream> {
    let name = ServerName::try_from(host.to_string())
        .unwrap_or_else(|_| ServerName::try_from("localhost").expect("a valid name"));
    let conn = ClientConnection::new(config()?, name).map_err(|e| {
        DbError::new(
            ErrorKind::Connection,
            format!("starting TLS with {host}: {e}"),
        )
    })?;
    let mut s = StreamOwned::new(conn, tcp);
    while s.conn.is_handshaking() {
        s.conn.complete_io(&mut s.sock).map_err(|e| {
            DbError::new(
                ErrorKind::Connection,
                format!("the TLS handshake with {host} failed: {e}"),
            )
        })?;
    }
    Ok(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn modes_parse_from_their_plan_names() {
        for n in Tls::NAMES {
            assert!(Tls::parse(n).is_some(), "{n}");
        }
        assert_eq!(Tls::parse("yes"), None);
        assert!(Tls::default().is_off());
        assert_eq!(Tls::Required.name(), "required");
        assert_eq!(Tls::Off.tcp_transport("h", 1), "tcp h:1");
        assert_eq!(
            Tls::Preferred.tcp_transport("h", 1),
            "tcp h:1, tls preferred"
        );
    }
}
