//! What a script calls that relbench's sysbench API does not offer, found
//! in its text before it runs: a script fails when it is loaded, naming
//! the function and its line, not minutes into a step.

/// The parts of `sysbench.*` relbench offers; a name under one of the
/// open prefixes is the script's own (its options, hooks, commands).
const OFFERED: [&str; 41] = [
    "sysbench.tid",
    "sysbench.version",
    "sysbench.version_string",
    "sysbench.error",
    "sysbench.error.NONE",
    "sysbench.error.RESTART_EVENT",
    "sysbench.cmdline",
    "sysbench.cmdline.command",
    "sysbench.cmdline.script_path",
    "sysbench.cmdline.argv",
    "sysbench.cmdline.PARALLEL_COMMAND",
    "sysbench.cmdline.options",
    "sysbench.cmdline.commands",
    "sysbench.hooks",
    "sysbench.hooks.before_restart_event",
    "sysbench.hooks.sql_error_ignorable",
    // Accepted, never called: relbench reports its own figures.
    "sysbench.hooks.report_intermediate",
    "sysbench.hooks.report_cumulative",
    "sysbench.report_default",
    "sysbench.report_csv",
    "sysbench.report_json",
    "sysbench.opt",
    "sysbench.rand",
    "sysbench.rand.uniform_uint64",
    "sysbench.rand.uniform_double",
    "sysbench.rand.default",
    "sysbench.rand.uniform",
    "sysbench.rand.gaussian",
    "sysbench.rand.special",
    "sysbench.rand.pareto",
    "sysbench.rand.zipfian",
    "sysbench.rand.unique",
    "sysbench.rand.string",
    "sysbench.rand.varstring",
    "sysbench.sql",
    "sysbench.sql.driver",
    "sysbench.sql.type",
    "sysbench.sql.error",
    "sysbench.sql.error.NONE",
    "sysbench.sql.error.IGNORABLE",
    "sysbench.sql.error.FATAL",
];

/// Prefixes whose names a script makes itself.
const OPEN: [&str; 5] = [
    "sysbench.opt.",
    "sysbench.cmdline.options.",
    "sysbench.cmdline.commands.",
    "sysbench.cmdline.ARG_",
    "sysbench.sql.type.",
];

/// sysbench 0.5's connection functions (sysbench 1.0 still has them) and
/// methods relbench does not offer.
const LEGACY: [&str; 15] = [
    "db_connect",
    "db_disconnect",
    "db_query",
    "db_bulk_insert_init",
    "db_bulk_insert_next",
    "db_bulk_insert_done",
    "db_prepare",
    "db_bind_param",
    "db_bind_result",
    "db_execute",
    "db_store_results",
    "db_free_results",
    "db_close",
    "set_vars",
    "sysbench.db",
];
const METHODS: [&str; 4] = [
    ":more_results(",
    ":next_result(",
    ":bind_result(",
    ":fetch_row_ptr(",
];

/// The most connections a thread may hold at once (`drv:connect()`
/// before `con:disconnect()`).
pub const MAX_CONNECTIONS: usize = 8;

/// The most `:connect(` calls in one top-level function of a script's
/// text (without its comments; a function runs from a line that begins
/// `function` or `local function` to the next such line): the
/// connections each of its threads is given before the step, so one
/// that holds two at once (sysbench allows it) has them. sysbench's
/// oltp_common.lua connects once in each of four functions: one.
pub fn connects(source: &str) -> usize {
    let mut most = 0;
    let mut here = 0;
    for line in without_comments(source).lines() {
        if line.starts_with("function ") || line.starts_with("local function ") {
            here = 0;
        }
        here += line.matches(":connect(").count();
        most = most.max(here);
    }
    most
}

/// Something of sysbench's API a script uses that relbench does not offer.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{path}:{line}: {what} is not supported by relbench{why}")]
pub struct Unsupported {
    pub path: String,
    pub line: usize,
    /// The name or method, as the script spells it.
    pub what: String,
    /// What to use instead, or what relbench does with it (may be empty).
    pub why: &'static str,
}

/// The first use of something relbench does not offer, as
/// `path:line: NAME is not supported by relbench`.
pub fn unsupported(source: &str, path: &str) -> Result<(), Unsupported> {
    let code = without_comments(source);
    for (i, line) in code.lines().enumerate() {
        let say = |what: &str, why: &'static str| {
            Err(Unsupported {
                path: path.to_string(),
                line: i + 1,
                what: what.to_string(),
                why,
            })
        };
        for m in METHODS {
            if line.contains(m) {
                return say(m.trim_matches(|c| c == ':' || c == '('), "");
            }
        }
        for (at, _) in line.match_indices("sysbench") {
            let before = line[..at].chars().next_back();
            if before.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.') {
                continue;
            }
            let name: String = line[at..]
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_' || *c == '.')
                .collect();
            let name = name.trim_end_matches('.');
            if name == "sysbench"
                || OFFERED.contains(&name)
                || OPEN.iter().any(|p| name.starts_with(p))
            {
                continue;
            }
            if name.starts_with("sysbench.hooks.") {
                return say(
                    name,
                    ": relbench calls before_restart_event and sql_error_ignorable, and takes \
                     report_intermediate and report_cumulative without calling them (it reports its own figures)",
                );
            }
            return say(name, "");
        }
        for legacy in LEGACY {
            for (at, _) in line.match_indices(legacy) {
                let before = line[..at].chars().next_back();
                let after = line[at + legacy.len()..].chars().next();
                let word =
                    |c: Option<char>| c.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_');
                if !word(before) && !word(after) && before != Some('.') && before != Some(':') {
                    return say(
                        legacy,
                        " (sysbench 0.5's API: use sysbench.sql.driver() and its connection)",
                    );
                }
            }
        }
    }
    Ok(())
}

/// The text with its comments blanked, lines kept, so a commented-out
/// call is not reported. Strings are left as they are.
fn without_comments(source: &str) -> String {
    let mut out = String::with_capacity(source.len());
    let mut rest = source;
    while let Some(at) = rest.find("--") {
        let (code, comment) = rest.split_at(at);
        // A `--` inside a string on the same line is not a comment.
        let line_start = code.rfind('\n').map_or(0, |i| i + 1);
        let quotes = code[line_start..]
            .chars()
            .filter(|&c| c == '"' || c == '\'')
            .count();
        out.push_str(code);
        if quotes % 2 == 1 {
            out.push_str("--");
            rest = &comment[2..];
            continue;
        }
        let end = if let Some(long) = comment.strip_prefix("--[[") {
            long.find("]]").map_or(comment.len(), |e| e + 6)
        } else {
            comment.find('\n').unwrap_or(comment.len())
        };
        out.extend(
            comment[..end]
                .chars()
                .map(|c| if c == '\n' { '\n' } else { ' ' }),
        );
        rest = &comment[end..];
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn connections_are_counted_in_the_function_that_holds_the_most() {
        // oltp_common.lua's shape: one connect in each of its functions.
        let oltp = "function cmd_prepare()\n   local con = drv:connect()\nend\n\
                    function thread_init()\n   con = drv:connect()\nend\n\
                    function cleanup()\n   local con = drv:connect() -- con:connect(\nend\n";
        assert_eq!(connects(oltp), 1);
        let two = "local function f()\n   a = drv:connect()\n   b = drv:connect()\nend\n\
                   function g()\n   c = drv:connect()\nend\n";
        assert_eq!(connects(two), 2);
        assert_eq!(connects("print(1)\n"), 0);
    }

    #[test]
    fn a_call_relbench_does_not_offer_is_named_with_its_line() {
        let s = "function event()\n  -- sysbench.histogram is fine here\n  local h = sysbench.histogram.print()\nend\n";
        assert_eq!(
            unsupported(s, "x.lua").unwrap_err().to_string(),
            "x.lua:3: sysbench.histogram.print is not supported by relbench"
        );
        let s = "function event()\n  rs = db_query(\"SELECT 1\")\nend";
        assert!(unsupported(s, "y.lua")
            .unwrap_err()
            .to_string()
            .starts_with("y.lua:2: db_query is not supported"));
        assert!(unsupported("if con:more_results() then end", "z.lua").is_err());
    }

    #[test]
    fn sysbenchs_own_scripts_use_only_what_is_offered() {
        let dir = std::path::Path::new(super::super::state::SYSBENCH_DIR);
        let entries =
            std::fs::read_dir(dir).expect("sysbench's scripts (./test installs sysbench)");
        for e in entries.flatten() {
            let text = std::fs::read_to_string(e.path()).unwrap();
            assert_eq!(
                unsupported(&text, "s.lua"),
                Ok(()),
                "{}",
                e.path().display()
            );
        }
    }
}
