//! Server URLs of targets someone else runs:
//! `mysql://user@host:port/database`, `mariadb://…`, `postgres://…`, with
//! `?socket=/path` for a unix socket. A URL never holds a password: it comes
//! from the environment variable the plan names, so it never reaches a file.

use std::path::PathBuf;

use super::EngineKind;

#[derive(Debug, Clone, PartialEq)]
pub struct ServerUrl {
    pub user: String,
    pub host: String,
    pub port: Option<u16>,
    pub database: Option<String>,
    pub socket: Option<PathBuf>,
}

/// What is wrong with a target's URL, and what a right one looks like.
/// Never the URL itself: it may hold the password being refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BadUrl {
    #[error("not a URL; write it as {example}")]
    NotAUrl { example: &'static str },
    #[error("scheme \"{scheme}\" does not fit engine {engine}; write it as {example}")]
    Scheme {
        scheme: String,
        engine: EngineKind,
        example: &'static str,
    },
    #[error(
        "the URL holds a password; remove it and name an environment variable that holds it \
         with password_env = \"VAR\" (passwords never go in a plan)"
    )]
    Password,
    #[error("port \"{0}\" is not a number from 1 to 65535")]
    Port(String),
    /// The option's name only: its value may be a secret.
    #[error("unknown URL option \"{0}\"; the one option is socket=/path/to/socket")]
    UnknownOption(String),
    #[error("the URL names no host; write it as {example}")]
    NoHost { example: &'static str },
}

impl ServerUrl {
    /// Parses a URL for `engine`; the error says what a right one looks like.
    pub fn parse(s: &str, engine: EngineKind) -> Result<ServerUrl, BadUrl> {
        let example = match engine {
            EngineKind::Postgres => "postgres://bench@db1:5432/sbtest",
            _ => "mysql://bench@db1:3306/sbtest",
        };
        let (scheme, rest) = s.split_once("://").ok_or(BadUrl::NotAUrl { example })?;
        let ok = match engine {
            EngineKind::Postgres => matches!(scheme, "postgres" | "postgresql"),
            EngineKind::Mysql | EngineKind::Mariadb => matches!(scheme, "mysql" | "mariadb"),
            EngineKind::Sqlite => false,
        };
        if !ok {
            return Err(BadUrl::Scheme {
                scheme: scheme.to_string(),
                engine,
                example,
            });
        }
        let (rest, query) = match rest.split_once('?') {
            Some((r, q)) => (r, Some(q)),
            None => (rest, None),
        };
        let (authority, path) = match rest.split_once('/') {
            Some((a, p)) => (a, Some(p)),
            None => (rest, None),
        };
        let (userinfo, hostport) = match authority.rsplit_once('@') {
            Some((u, h)) => (Some(u), h),
            None => (None, authority),
        };
        if userinfo.is_some_and(|u| u.contains(':')) {
            return Err(BadUrl::Password);
        }
        let (host, port) = match hostport.rsplit_once(':') {
            Some((h, p)) => (
                h,
                Some(p.parse::<u16>().map_err(|_| BadUrl::Port(p.to_string()))?),
            ),
            None => (hostport, None),
        };
        let mut socket = None;
        for kv in query.into_iter().flat_map(|q| q.split('&')) {
            match kv.split_once('=') {
                Some(("socket", p)) => socket = Some(PathBuf::from(p)),
                Some(("password", _)) => return Err(BadUrl::Password),
                other => {
                    return Err(BadUrl::UnknownOption(
                        other.map_or(kv, |(k, _)| k).to_string(),
                    ))
                }
            }
        }
        if host.is_empty() && socket.is_none() {
            return Err(BadUrl::NoHost { example });
        }
        Ok(ServerUrl {
            user: userinfo.unwrap_or("root").to_string(),
            host: if host.is_empty() {
                "localhost".into()
            } else {
                host.to_string()
            },
            port,
            database: path.filter(|p| !p.is_empty()).map(str::to_string),
            socket,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_parse_into_their_parts() {
        let u = ServerUrl::parse("mysql://bench@db1:3307/sb", EngineKind::Mariadb).unwrap();
        assert_eq!(
            (u.user.as_str(), u.host.as_str(), u.port),
            ("bench", "db1", Some(3307))
        );
        assert_eq!(u.database.as_deref(), Some("sb"));
        let u = ServerUrl::parse("postgres://x@/db?socket=/run/pg", EngineKind::Postgres).unwrap();
        assert_eq!(u.socket, Some(PathBuf::from("/run/pg")));
    }

    #[test]
    fn passwords_in_urls_are_refused() {
        let e = ServerUrl::parse("mysql://bench:hunter2@db1/sb", EngineKind::Mysql)
            .unwrap_err()
            .to_string();
        assert!(e.contains("password_env"), "{e}");
        assert!(!e.contains("hunter2"));
    }

    #[test]
    fn a_password_in_the_query_string_is_refused_and_not_echoed() {
        let e = ServerUrl::parse("mysql://bench@db1/sb?password=hunter2", EngineKind::Mysql)
            .unwrap_err()
            .to_string();
        assert!(e.contains("password_env") && !e.contains("hunter2"), "{e}");
        let e = ServerUrl::parse("mysql://bench@db1/sb?pw=hunter2", EngineKind::Mysql)
            .unwrap_err()
            .to_string();
        assert!(e.contains("\"pw\"") && !e.contains("hunter2"), "{e}");
    }

    #[test]
    fn the_scheme_must_fit_the_engine() {
        let e = ServerUrl::parse("postgres://a@b/c", EngineKind::Mysql)
            .unwrap_err()
            .to_string();
        assert!(e.contains("mysql://"), "{e}");
    }
}
