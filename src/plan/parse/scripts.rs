//! The plan's own workloads (`[[workload]]`): SQL checked with positions
//! inside their strings, and sysbench scripts, read and checked once.

use super::*;
use crate::workload::lua::{self, LuaSpec};
use crate::workload::script::spec;

/// The `[[workload]]`s, checked (functions, placeholders, weights,
/// transactions) with positions inside their strings, and the sysbench
/// scripts, loaded; they become entries of the plan's catalogue.
pub(super) fn scripts(cx: &mut Ctx<'_>, raw: &RawPlan) -> (Vec<ScriptSpec>, Vec<LuaSpec>) {
    let mut out: Vec<ScriptSpec> = Vec::new();
    let mut scripts: Vec<LuaSpec> = Vec::new();
    let mut taken: Vec<String> = Vec::new();
    for w in raw.workload.iter().flatten() {
        let name = w.name.get_ref();
        if !name_is_free(cx, w, &taken) {
            continue;
        }
        taken.push(name.clone());
        if let Some(script) = &w.script {
            if let Some(spec) = lua_script(cx, w, script) {
                scripts.push(spec);
            }
            continue;
        }
        if let Some(n) = &w.connections {
            cx.err(
                n.span(),
                "connections is a sysbench script's (a workload with `script`)",
                Some("a workload of statements runs each client on one connection".into()),
            );
        }
        let Some(list) = &w.statement else {
            cx.err(
                w.name.span(),
                format!("workload \"{name}\" has no [[workload.statement]]"),
                Some("give it at least one statement: name, sql, bind, returns, weight".into()),
            );
            continue;
        };
        let mut statements = Vec::new();
        for st in list.get_ref() {
            let st = statement(cx, st, &statements);
            statements.push(st);
        }
        if statements.is_empty() {
            cx.err(
                list.span(),
                format!("workload \"{name}\" has no statements"),
                None,
            );
            continue;
        }
        let transactions = transactions(cx, w, &statements);
        let spec = ScriptSpec {
            name: name.clone(),
            about: w
                .about
                .clone()
                .unwrap_or_else(|| format!("the plan's workload {name}")),
            statements,
            transactions,
            setup: spec::Variants {
                all: w.setup.clone().unwrap_or_default(),
                mysql: w.setup_mysql.clone(),
                postgres: w.setup_postgres.clone(),
                sqlite: w.setup_sqlite.clone(),
            },
        };
        out.push(spec);
    }
    (out, scripts)
}

/// A `[[workload]]` with `script`: the file found (beside the plan, or
/// among sysbench's own for a bare name), its options checked, the
/// script loaded once.
fn lua_script(cx: &mut Ctx<'_>, w: &RawWorkload, script: &Spanned<String>) -> Option<LuaSpec> {
    if w.statement.is_some() || w.transaction.is_some() || w.setup.is_some() {
        cx.err(
            script.span(),
            "a workload with a script has no statements, transactions or setup of its own",
            Some("the script's prepare command makes its tables".into()),
        );
        return None;
    }
    let mut options = std::collections::BTreeMap::new();
    for (k, v) in w.options.iter().flat_map(|o| o.get_ref().iter()) {
        let value = match v {
            toml::Value::String(s) => s.clone(),
            toml::Value::Boolean(b) => (if *b { "on" } else { "off" }).to_string(),
            toml::Value::Array(a) => a
                .iter()
                .map(|x| x.as_str().map_or_else(|| x.to_string(), str::to_string))
                .collect::<Vec<_>>()
                .join(","),
            other => other.to_string(),
        };
        options.insert(k.replace('-', "_"), value);
    }
    let options_span = w.options.as_ref().map_or(script.span(), |o| o.span());
    if let Err(e) = lua::check_options(&options) {
        cx.err(options_span, e.to_string(), None);
        return None;
    }
    let given = std::path::Path::new(script.get_ref());
    let mut path = cx.dir.join(given);
    let bare = given.components().count() == 1;
    if !path.exists() && bare {
        path = std::path::Path::new(lua::state::SYSBENCH_DIR).join(given);
    }
    if !path.exists() {
        cx.err(
            script.span(),
            format!("no script {} here", script.get_ref()),
            Some(format!(
                "paths are relative to the plan; a bare name is also looked for in {}",
                lua::state::SYSBENCH_DIR
            )),
        );
        return None;
    }
    let path = std::path::absolute(&path).unwrap_or(path);
    match lua::state::inspect(w.name.get_ref(), &path, options) {
        Ok(mut spec) => {
            if let Some(n) = &w.connections {
                let most = lua::scan::MAX_CONNECTIONS as u32;
                if !(1..=most).contains(n.get_ref()) {
                    cx.err(
                        n.span(),
                        format!("connections = {}: give 1 to {most}", n.get_ref()),
                        Some(
                            "the connections each thread of the script holds at once at most"
                                .into(),
                        ),
                    );
                    return None;
                }
                spec.connections = *n.get_ref();
            }
            Some(spec)
        }
        Err(e) => {
            let span = match e.1 {
                lua::state::Blame::Options => options_span,
                lua::state::Blame::Script => script.span(),
            };
            cx.err(span, e.0, None);
            None
        }
    }
}

/// Whether a workload's name is well formed and no step's already.
fn name_is_free(cx: &mut Ctx<'_>, w: &RawWorkload, taken: &[String]) -> bool {
    let name = w.name.get_ref();
    if name.is_empty()
        || name.len() > 64
        || !name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
    {
        cx.err(
            w.name.span(),
            format!("workload name \"{name}\" may have 1 to 64 letters, digits, '-' and '_'"),
            None,
        );
        return false;
    }
    if ["load", "settle"].contains(&name.as_str())
        || Maint::find(name).is_some()
        || Catalogue::is_builtin(name)
        || taken.contains(name)
    {
        cx.err(
            w.name.span(),
            format!("workload \"{name}\" is already a step's name"),
            Some("give the plan's workload a name of its own".into()),
        );
        return false;
    }
    true
}

/// One `[[workload.statement]]`: its bindings, placeholders, rows
/// returned and weight.
fn statement(
    cx: &mut Ctx<'_>,
    st: &RawStatement,
    earlier: &[spec::StatementSpec],
) -> spec::StatementSpec {
    // A string's text starts one byte after its opening quote.
    let at = |s: &Spanned<String>, offset: usize| {
        let start = s.span().start + 1 + offset;
        start..start + 1
    };
    let mut bind: Vec<(String, spec::Gen)> = Vec::new();
    for (k, v) in st.bind.iter().flatten() {
        match spec::Gen::parse(v.get_ref()) {
            Ok(g) => bind.push((k.get_ref().clone(), g)),
            Err(e) => cx.err(
                at(v, e.at),
                e.message,
                Some(format!("the functions: {}", spec::FUNCTIONS.join(", "))),
            ),
        }
    }
    let variants = [
        Some(&st.sql),
        st.sql_mysql.as_ref(),
        st.sql_postgres.as_ref(),
        st.sql_sqlite.as_ref(),
    ];
    for sql in variants.into_iter().flatten() {
        let found = spec::placeholders(sql.get_ref());
        if found.len() > spec::MAX_PARAMS {
            cx.err(
                sql.span(),
                format!(
                    "a statement takes at most {} placeholders",
                    spec::MAX_PARAMS
                ),
                None,
            );
        }
        for (offset, p) in &found {
            if !st.bind.iter().flatten().any(|(k, _)| k.get_ref() == p) {
                cx.err(
                    at(sql, *offset),
                    format!("placeholder :{p} has no binding"),
                    Some(format!(
                        "bind it, e.g. bind = {{ {p} = \"uniform(1, rows)\" }}"
                    )),
                );
            }
        }
    }
    for (k, _) in st.bind.iter().flatten() {
        if !spec::placeholders(st.sql.get_ref())
            .iter()
            .any(|(_, p)| p == k.get_ref())
        {
            cx.err(
                k.span(),
                format!(
                    "binding \"{}\" is not a placeholder of the statement (write :{} in its sql)",
                    k.get_ref(),
                    k.get_ref()
                ),
                None,
            );
        }
    }
    let returns = match st.returns.as_ref().map(|r| (r, r.get_ref())) {
        None => spec::Returns::Any,
        Some((_, toml::Value::Integer(n))) if *n >= 0 => spec::Returns::Exactly(*n as u64),
        Some((r, v)) => match v.as_str().and_then(spec::Returns::parse) {
            Some(x) => x,
            None => {
                cx.err(
                    r.span(),
                    format!("returns takes a row count, \">=N\" or \"any\", not {v}"),
                    Some("returns = 1, returns = \">=1\" or returns = \"any\"".into()),
                );
                spec::Returns::Any
            }
        },
    };
    let weight = match &st.weight {
        None => 1,
        Some(w) if *w.get_ref() >= 1 && *w.get_ref() <= 1_000_000 => *w.get_ref() as u32,
        Some(w) => {
            cx.err(w.span(), format!("weight must be between 1 and 1000000, not {}", w.get_ref()), Some("leave a statement out of the mix by removing it, or give it to a transaction only".into()));
            1
        }
    };
    if earlier
        .iter()
        .any(|s: &spec::StatementSpec| &s.name == st.name.get_ref())
    {
        cx.err(
            st.name.span(),
            format!("statement \"{}\" appears twice", st.name.get_ref()),
            None,
        );
    }
    let plain = |o: &Option<Spanned<String>>| o.as_ref().map(|s| s.get_ref().clone());
    spec::StatementSpec {
        name: st.name.get_ref().clone(),
        sql: spec::Variants {
            all: st.sql.get_ref().clone(),
            mysql: plain(&st.sql_mysql),
            postgres: plain(&st.sql_postgres),
            sqlite: plain(&st.sql_sqlite),
        },
        bind,
        returns,
        weight,
    }
}

/// A workload's `[[workload.transaction]]`s, each naming its statements.
fn transactions(
    cx: &mut Ctx<'_>,
    w: &RawWorkload,
    statements: &[spec::StatementSpec],
) -> Vec<spec::TxSpec> {
    let mut transactions = Vec::new();
    for t in w.transaction.iter().flatten() {
        for s in &t.statements {
            if !statements.iter().any(|x| &x.name == s.get_ref()) {
                let names: Vec<&str> = statements.iter().map(|x| x.name.as_str()).collect();
                cx.err(s.span(), format!("transaction \"{}\" names statement \"{}\", which the workload does not have", t.name.get_ref(), s.get_ref()), Some(format!("its statements: {}", names.join(", "))));
            }
        }
        let weight = match &t.weight {
            None => 1,
            Some(w) if *w.get_ref() >= 1 && *w.get_ref() <= 1_000_000 => *w.get_ref() as u32,
            Some(w) => {
                cx.err(
                    w.span(),
                    format!("weight must be between 1 and 1000000, not {}", w.get_ref()),
                    None,
                );
                1
            }
        };
        if t.statements.is_empty() {
            cx.err(
                t.name.span(),
                format!("transaction \"{}\" has no statements", t.name.get_ref()),
                None,
            );
        }
        transactions.push(spec::TxSpec {
            name: t.name.get_ref().clone(),
            statements: t.statements.iter().map(|s| s.get_ref().clone()).collect(),
            weight,
        });
    }
    transactions
}
