//! `[[target]]`s: embedded files, URLs of servers someone else runs, and
//! managed servers, each checked where it is written.

use super::*;
use crate::db::spec::Auth;

pub(super) fn targets(cx: &mut Ctx<'_>, raw: &RawPlan) -> Vec<TargetSpec> {
    let Some(list) = &raw.target else {
        cx.err(
            0..0,
            "the plan has no [[target]]",
            Some(
                "add one, e.g.\n    [[target]]\n    name = \"default\"\n    engine = \"sqlite\""
                    .into(),
            ),
        );
        return Vec::new();
    };
    if list.get_ref().is_empty() {
        cx.err(
            list.span(),
            "the plan has no targets",
            Some("add a [[target]] with a name and an engine".into()),
        );
    }
    let mut out: Vec<TargetSpec> = Vec::new();
    let mut copied = Vec::new();
    for t in list.get_ref() {
        let t = t.get_ref();
        let name = t.name.get_ref();
        target_name(cx, t, &out);
        let Some(engine) = EngineKind::parse(t.engine.get_ref()) else {
            let names = EngineKind::ALL.iter().map(|e| e.name());
            let help = did_you_mean(t.engine.get_ref(), names).map_or_else(
                || "engines are sqlite, mysql, mariadb, postgres".into(),
                |m| format!("did you mean \"{m}\"?"),
            );
            cx.err(
                t.engine.span(),
                format!("unknown engine \"{}\"", t.engine.get_ref()),
                Some(help),
            );
            continue;
        };
        let access = if engine.is_server() {
            server_access(cx, t, engine)
        } else {
            embedded_access(cx, t)
        };
        let storage_engine = storage_engine(cx, t, engine);
        let tls = tls(cx, t, engine, access.as_ref());
        let table_options = table_options(cx, t);
        let copies = copies(cx, t, access.as_ref());
        if let Some(access) = access {
            out.push(TargetSpec {
                name: name.clone(),
                engine,
                access,
                storage_engine,
                copy_of: None,
                tls,
                table_options,
            });
            if copies > 1 {
                copied.push((out.len() - 1, copies, t.name.span()));
            }
        }
    }
    add_aa_copies(cx, &mut out, copied);
    out
}

/// A target's name names directories and files, once in the plan.
fn target_name(cx: &mut Ctx<'_>, t: &RawTarget, earlier: &[TargetSpec]) {
    let name = t.name.get_ref();
    // It names directories and files: "." or ".." would put results
    // outside the run's steps/ directory.
    if name.is_empty()
        || name.len() > 64
        || name.starts_with('.')
        || !name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'))
    {
        cx.err(t.name.span(), format!("target name \"{name}\" is not allowed"), Some("use 1 to 64 letters, digits, '.', '_' or '-', not starting with '.' (it names files), e.g. \"ma1011.innodb\"".into()));
    }
    if earlier.iter().any(|o| o.name == *name) {
        cx.err(
            t.name.span(),
            format!("target name \"{name}\" is used twice"),
            Some("give every target its own name; reports tell targets apart by name".into()),
        );
    }
}

/// The storage engine of a MySQL or MariaDB target.
fn storage_engine(cx: &mut Ctx<'_>, t: &RawTarget, engine: EngineKind) -> Option<String> {
    match &t.storage_engine {
        Some(e) if !matches!(engine, EngineKind::Mysql | EngineKind::Mariadb) => {
            cx.err(
                e.span(),
                format!("storage_engine is for mysql and mariadb targets, not {engine}"),
                Some("remove it".into()),
            );
            None
        }
        Some(e)
            if e.get_ref().is_empty()
                || !e
                    .get_ref()
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_') =>
        {
            cx.err(
                e.span(),
                format!("\"{}\" is not a storage engine name", e.get_ref()),
                Some("for example \"InnoDB\" or \"ROCKSDB\"".into()),
            );
            None
        }
        Some(e) => Some(e.get_ref().clone()),
        None => None,
    }
}

/// How a server target's connections are encrypted.
fn tls(cx: &mut Ctx<'_>, t: &RawTarget, engine: EngineKind, access: Option<&Access>) -> Tls {
    match &t.tls {
        None => Tls::Off,
        Some(v) if !engine.is_server() => {
            cx.err(
                v.span(),
                format!("tls is for server targets, not {engine}"),
                Some("remove it".into()),
            );
            Tls::Off
        }
        Some(v) => match Tls::parse(v.get_ref()) {
            Some(Tls::Off) => Tls::Off,
            Some(_) if matches!(access, Some(Access::Managed(m)) if m.socket) => {
                cx.err(
                    v.span(),
                    "tls is for TCP connections, and this target connects over the socket (transport = \"socket\")".to_string(),
                    Some("remove `tls`, or `transport`".into()),
                );
                Tls::Off
            }
            Some(mode) => mode,
            None => {
                cx.err(
                    v.span(),
                    format!("unknown tls mode \"{}\"", v.get_ref()),
                    Some(format!("tls is one of {}", Tls::NAMES.join(", "))),
                );
                Tls::Off
            }
        },
    }
}

/// What `CREATE TABLE` is given after its columns: one clause, no
/// statement of its own.
fn table_options(cx: &mut Ctx<'_>, t: &RawTarget) -> Option<String> {
    t.table_options.as_ref().and_then(|o| {
        let text = o.get_ref().trim();
        let why = if text.is_empty() {
            Some("table_options is empty")
        } else if text.contains(';') || text.contains("--") || text.contains("/*") {
            Some("table_options may not hold `;` or a comment: it is appended to CREATE TABLE, as one statement")
        } else if text.chars().any(char::is_control) {
            Some("table_options holds a control character")
        } else {
            None
        };
        match why {
            Some(why) => {
                cx.err(
                    o.span(),
                    why.to_string(),
                    Some("for example \"ROW_FORMAT=COMPRESSED KEY_BLOCK_SIZE=8\", \"PARTITION BY HASH(id) PARTITIONS 8\" or \"WITH (fillfactor = 80)\"".into()),
                );
                None
            }
            None => Some(text.to_string()),
        }
    })
}

/// How many identical copies of the target run (A/A), each with data of
/// its own.
fn copies(cx: &mut Ctx<'_>, t: &RawTarget, access: Option<&Access>) -> i64 {
    let copies = t
        .copies
        .as_ref()
        .and_then(|c| cx.positive(c, "copies", MAX_COPIES))
        .unwrap_or(1);
    if copies > 1 {
        let own = match access {
            Some(Access::Embedded { path: Some(_), .. }) => Some("path"),
            Some(Access::Managed(m)) if m.datadir.is_some() => Some("datadir"),
            _ => None,
        };
        if let (Some(key), Some(c)) = (own, &t.copies) {
            cx.err(
                c.span(),
                format!("A/A copies need data of their own, but this target names its `{key}`"),
                Some(format!("remove `{key}` (each copy then keeps its data in the results directory), or `copies`")),
            );
        }
    }
    copies
}

/// A/A copies run after every other target in each repeat, so the time
/// between two identical runs is as long as the plan makes it.
fn add_aa_copies(
    cx: &mut Ctx<'_>,
    out: &mut Vec<TargetSpec>,
    copied: Vec<(usize, i64, std::ops::Range<usize>)>,
) {
    for (i, n, span) in copied {
        for k in 2..=n {
            let mut copy = out[i].clone();
            copy.name = format!("{}-aa{k}", out[i].name);
            copy.copy_of = Some(out[i].name.clone());
            if out.iter().any(|o| o.name == copy.name) {
                cx.err(
                    span.clone(),
                    format!(
                        "the A/A copy \"{}\" has the name of another target",
                        copy.name
                    ),
                    Some("rename that target".into()),
                );
            }
            out.push(copy);
        }
    }
}

/// Names a key that does not belong to this kind of target.
pub(super) fn misplaced<T>(cx: &mut Ctx<'_>, key: &Option<Spanned<T>>, name: &str, belongs: &str) {
    if let Some(k) = key {
        cx.err(
            k.span(),
            format!("`{name}` is for {belongs}"),
            Some(format!("remove `{name}` from this target")),
        );
    }
}

pub(super) fn embedded_access(cx: &mut Ctx<'_>, t: &RawTarget) -> Option<Access> {
    let server_keys = "server targets (mariadb, mysql, postgres)";
    misplaced(cx, &t.basedir, "basedir", server_keys);
    misplaced(cx, &t.config, "config", server_keys);
    misplaced(cx, &t.datadir, "datadir", server_keys);
    misplaced(cx, &t.port, "port", server_keys);
    misplaced(cx, &t.user, "user", server_keys);
    misplaced(cx, &t.malloc, "malloc", server_keys);
    misplaced(cx, &t.transport, "transport", server_keys);
    misplaced(cx, &t.start_timeout, "start_timeout", server_keys);
    misplaced(cx, &t.url, "url", server_keys);
    misplaced(cx, &t.password_env, "password_env", server_keys);
    misplaced(cx, &t.auth, "auth", server_keys);
    if let Some(p) = &t.path {
        if let Some(why) = sqlite::foreign(&cx.dir.join(p.get_ref())) {
            cx.err(
                p.span(),
                why,
                Some("name a new file, or one an earlier relbench run created".into()),
            );
        }
    }
    let mut pragmas: Vec<(String, String)> = Vec::new();
    for (k, v) in t.pragmas.iter().flat_map(|p| p.get_ref()) {
        if let Some(p) = pragma(cx, k, v) {
            if pragmas.iter().any(|(n, _)| *n == p.0) {
                cx.err(
                    k.span(),
                    format!("pragma {} is set twice (names are not case-sensitive)", p.0),
                    Some("keep one".into()),
                );
                continue;
            }
            pragmas.push(p);
        }
    }
    Some(Access::Embedded {
        path: t.path.as_ref().map(|p| p.get_ref().into()),
        pragmas,
    })
}

/// A path from the plan, relative to the plan's directory, that must exist.
pub(super) fn existing(
    cx: &mut Ctx<'_>,
    v: &Spanned<String>,
    what: &str,
    dir: bool,
) -> Option<PathBuf> {
    let p = cx.dir.join(v.get_ref());
    let ok = if dir { p.is_dir() } else { p.is_file() };
    let is = match std::fs::metadata(&p) {
        Err(_) => "does not exist",
        Ok(m) if m.is_dir() => "is a directory, not a file",
        Ok(m) if m.is_file() => "is a file, not a directory",
        Ok(_) => "is neither a file nor a directory",
    };
    if ok {
        Some(p.canonicalize().unwrap_or(p))
    } else {
        // A server build the examples name and nobody fetched yet.
        let fetch = what == "basedir"
            && is == "does not exist"
            && v.get_ref().split('/').any(|c| c == "versions");
        cx.err(
            v.span(),
            format!("{what} {} {is}", p.display()),
            Some(if fetch {
                format!(
                    "fetch the builds with `examples/get-versions.sh` (it unpacks every build the \
                     examples name into examples/versions; `./test` links its cache there), or fix \
                     the path (relative paths are relative to {})",
                    cx.dir.display()
                )
            } else {
                format!(
                    "fix the path (relative paths are relative to {})",
                    cx.dir.display()
                )
            }),
        );
        None
    }
}

pub(super) fn server_access(cx: &mut Ctx<'_>, t: &RawTarget, engine: EngineKind) -> Option<Access> {
    let sqlite_keys = "sqlite targets";
    misplaced(cx, &t.path, "path", sqlite_keys);
    misplaced(
        cx,
        &t.pragmas,
        "pragmas",
        "sqlite targets (a server's settings go in its config file)",
    );
    match (&t.basedir, &t.url) {
        (Some(b), Some(_)) => {
            cx.err(b.span(), "give either `basedir` (relbench runs the server) or `url` (someone else does), not both", None);
            None
        }
        (None, None) => {
            cx.err(
                t.engine.span(),
                format!("a {engine} target needs `basedir` (relbench starts the server) or `url` (a server someone else runs)"),
                Some("for Debian's packages: basedir = \"/usr\" (MariaDB) or \"/usr/lib/postgresql/15\" (PostgreSQL)".into()),
            );
            None
        }
        (None, Some(u)) => url_access(cx, t, engine, u),
        (Some(b), None) => managed_access(cx, t, engine, b),
    }
}

/// A server someone else runs, by its URL.
fn url_access(
    cx: &mut Ctx<'_>,
    t: &RawTarget,
    engine: EngineKind,
    u: &Spanned<String>,
) -> Option<Access> {
    for (key, name) in [
        (&t.config, "config"),
        (&t.datadir, "datadir"),
        (&t.user, "user"),
        (&t.malloc, "malloc"),
    ] {
        misplaced(cx, key, name, "managed targets (with `basedir`)");
    }
    misplaced(
        cx,
        &t.port,
        "port",
        "managed targets; put the port in the URL",
    );
    misplaced(
        cx,
        &t.transport,
        "transport",
        "managed targets; a URL says ?socket=/path for a socket",
    );
    misplaced(
        cx,
        &t.start_timeout,
        "start_timeout",
        "managed targets (with `basedir`)",
    );
    if let Err(e) = ServerUrl::parse(u.get_ref(), engine) {
        // Never echo the URL: it may hold the password being refused.
        cx.err(u.span(), format!("bad url: {e}"), None);
        return None;
    }
    let password_env = t.password_env.as_ref().and_then(|v| {
        let name = v.get_ref();
        if std::env::var_os(name).is_none() {
            cx.err(
                v.span(),
                format!("the environment variable {name} is not set"),
                Some(format!("export {name}=... before running relbench")),
            );
            None
        } else {
            Some(name.clone())
        }
    });
    let auth = match &t.auth {
        None => Auth::default(),
        Some(a) if engine != EngineKind::Postgres => {
            cx.err(
                a.span(),
                "`auth` is for postgres:// targets (the MySQL client speaks no cleartext password)",
                Some("remove `auth` from this target".into()),
            );
            Auth::default()
        }
        Some(a) => Auth::parse(a.get_ref()).unwrap_or_else(|| {
            cx.err(
                a.span(),
                format!("unknown auth \"{}\"", a.get_ref()),
                Some(format!(
                    "the weakest password exchange the server may ask for: {} (the default)",
                    Auth::NAMES.join(", ")
                )),
            );
            Auth::default()
        }),
    };
    Some(Access::Url {
        url: u.get_ref().clone(),
        password_env,
        auth,
    })
}

/// A server relbench starts from a basedir of its binaries.
fn managed_access(
    cx: &mut Ctx<'_>,
    t: &RawTarget,
    engine: EngineKind,
    b: &Spanned<String>,
) -> Option<Access> {
    misplaced(cx, &t.password_env, "password_env", "targets by `url`");
    misplaced(cx, &t.auth, "auth", "targets by `url`");
    let basedir = existing(cx, b, "basedir", true);
    if let Some(Err(e)) = basedir.as_deref().map(server::check_binaries) {
        cx.err(b.span(), format!("{e:#}"), None);
    }
    let config = t
        .config
        .as_ref()
        .and_then(|c| existing(cx, c, "config file", false));
    let malloc = t
        .malloc
        .as_ref()
        .and_then(|m| existing(cx, m, "malloc library", false));
    if let (Some(m), Some(Err(e))) = (
        &t.malloc,
        malloc
            .as_deref()
            .map(|p| crate::util::trusted(p, "the malloc library")),
    ) {
        cx.err(m.span(), format!("{e:#}"), None);
    }
    let port = t
        .port
        .as_ref()
        .and_then(|p| cx.positive(p, "port", 65535))
        .map(|p| p as u16);
    let user = t
        .user
        .as_ref()
        .and_then(|u| match server::lookup_user(u.get_ref()) {
            Ok(_) => Some(u.get_ref().clone()),
            Err(e) => {
                cx.err(u.span(), format!("{e:#}"), None);
                None
            }
        });
    let socket = match t.transport.as_ref().map(|v| (v, v.get_ref().as_str())) {
        None | Some((_, "tcp")) => false,
        Some((_, "socket")) => true,
        Some((v, other)) => {
            cx.err(
                v.span(),
                format!("unknown transport \"{other}\""),
                Some("use \"tcp\" (127.0.0.1, the default) or \"socket\"".into()),
            );
            false
        }
    };
    let start_timeout_secs = cx.duration(&t.start_timeout.clone(), "start_timeout", 120.0, 1.0);
    let args = t
        .args
        .as_ref()
        .map(|a| a.get_ref().clone())
        .unwrap_or_default();
    if let Ok(flavor) = crate::db::server::flavor_for(engine) {
        if let (Some(a), Err(e)) = (&t.args, flavor.check_args(&args)) {
            cx.err(a.span(), e.to_string(), None);
        }
        let text = config
            .as_ref()
            .and_then(|c| std::fs::read_to_string(c).ok());
        if let (Some(c), Some(Err(e))) =
            (&t.config, text.as_deref().map(|x| flavor.check_config(x)))
        {
            cx.err(c.span(), e.to_string(), None);
        }
    }
    // What a run would refuse of the datadir, said now.
    if let Some(d) = &t.datadir {
        let uid = user
            .as_deref()
            .or(crate::db::server::default_user(engine))
            .and_then(|u| server::lookup_user(u).ok())
            .map(|(uid, _)| uid);
        if let Err(e) = server::check_datadir(&cx.dir.join(d.get_ref()), uid) {
            cx.err(d.span(), format!("{e:#}"), None);
        }
    }
    Some(Access::Managed(Managed {
        basedir: basedir?,
        config,
        datadir: t.datadir.as_ref().map(|d| cx.dir.join(d.get_ref())),
        port,
        user,
        args,
        malloc,
        socket,
        start_timeout_secs,
    }))
}

pub(super) fn pragma(
    cx: &mut Ctx<'_>,
    k: &Spanned<String>,
    v: &Spanned<toml::Value>,
) -> Option<(String, String)> {
    let name = k.get_ref().to_ascii_lowercase();
    let Some((_, allowed)) = sqlite::PRAGMAS.iter().find(|(n, _)| *n == name) else {
        let names = sqlite::PRAGMAS.iter().map(|(n, _)| *n);
        let list: Vec<_> = sqlite::PRAGMAS.iter().map(|(n, _)| *n).collect();
        let help = match did_you_mean(&name, names) {
            Some(m) => format!("did you mean \"{m}\"?"),
            None => format!("relbench sets these pragmas: {}", list.join(", ")),
        };
        cx.err(
            k.span(),
            format!(
                "unknown SQLite pragma \"{}\" (SQLite would silently ignore it)",
                k.get_ref()
            ),
            Some(help),
        );
        return None;
    };
    let value = match v.get_ref() {
        toml::Value::Integer(i) => i.to_string(),
        toml::Value::Boolean(b) => (if *b { "on" } else { "off" }).to_string(),
        toml::Value::String(s) => s.to_ascii_lowercase(),
        other => {
            cx.err(
                v.span(),
                format!("pragma {name} takes a string or an integer, not {other}"),
                None,
            );
            return None;
        }
    };
    match allowed {
        Some(ok) if !ok.contains(&value.as_str()) => {
            cx.err(
                v.span(),
                format!("\"{value}\" is not a value of pragma {name}"),
                Some(format!("use one of: {}", ok.join(", "))),
            );
            None
        }
        None if value.parse::<i64>().is_err() => {
            cx.err(
                v.span(),
                format!("pragma {name} takes an integer, not \"{value}\""),
                None,
            );
            None
        }
        _ => Some((name, value)),
    }
}
