//! The parser's tests: every check with its position and message.

use super::*;

fn errors(text: &str) -> Vec<PlanError> {
    parse(text, "p.toml", Path::new("."))
        .expect_err("the plan should be rejected")
        .0
}

const TARGET: &str = "[[target]]\nname = \"a\"\nengine = \"sqlite\"\n";

#[test]
fn the_insert_suite_expands_and_takes_its_sizes() {
    let p = parse(
        &format!(
            "suite = \"insert\"\nclients = [4]\n[insert]\nl_i1_rows = 7\nq_commit = 20\n{TARGET}"
        ),
        "p.toml",
        Path::new("."),
    )
    .unwrap();
    assert_eq!(p.suite, "insert");
    let names: Vec<String> = p.steps.iter().map(|s| s.label()).collect();
    assert_eq!(names[..5], ["l.i0", "l.x", "l.i1", "l.i2", "settle"]);
    assert_eq!(names.len(), 11);
    assert_eq!(p.insert_benchmark.l_i1_rows, 7);
    assert_eq!(p.insert_benchmark.q_commit, 20);
    assert_eq!(p.insert_benchmark.l_i0_commit, 100);
    let cat = p.catalogue().unwrap();
    assert_eq!(p.tables_for(&cat, 4).names, ["pi1", "pi2", "pi3", "pi4"]);
}

#[test]
fn the_insert_benchmark_starts_with_l_i0_and_runs_whole_per_client_count() {
    // Each client count runs the whole sequence on fresh tables.
    let p = parse(
        &format!("suite = \"insert\"\nclients = [1, 2]\n{TARGET}"),
        "plan.toml",
        Path::new("."),
    )
    .unwrap();
    let cat = p.catalogue().unwrap();
    let order: Vec<(u32, String)> = p
        .schedule(&cat)
        .executions
        .iter()
        .map(|e| (e.id.at.clients, e.id.at.step.label()))
        .collect();
    assert_eq!(order[0], (1, "l.i0".to_string()));
    assert_eq!(order[4], (1, "settle".to_string()));
    assert_eq!(order[11], (2, "l.i0".to_string()));
    assert_eq!(p.tables_for(&cat, 1).names, ["pi1"]);
    let e = errors(&format!("steps = [\"l.x\", \"qr100\"]\n{TARGET}"));
    assert!(
        e[0].message.contains("start with \"l.i0\""),
        "{}",
        e[0].message
    );
    let e = errors(&format!(
        "suite = \"insert\"\n[insert]\nq_comit = 5\n{TARGET}"
    ));
    assert!(e[0].message.contains("q_comit"), "{}", e[0].message);
    let e = errors(&format!(
        "suite = \"insert\"\n[insert]\ndata_min = 30\n{TARGET}"
    ));
    assert!(e[0].message.contains("above data_max"), "{}", e[0].message);
}

#[test]
fn the_built_in_plans_are_valid() {
    let q = parse(super::super::QUICK_PLAN, "quick", Path::new(".")).unwrap();
    assert_eq!(q.targets.len(), 2);
    // A small study: a point query, a range, the writes and the inserts,
    // repeated so each is tested on its rounds.
    assert_eq!(q.steps.len(), 8);
    assert_eq!(q.repeats, 5);
    // One client: two SQLite connections to one file fall into a lock
    // convoy or not, run by run.
    assert_eq!(q.clients, vec![1]);
    let e = parse(super::super::EXAMPLE_PLAN, "example", Path::new(".")).unwrap();
    assert_eq!(e.clients, vec![2]);
    // The base is run twice, so its one-window ratios can be tested.
    assert_eq!(e.targets.len(), 3);
    assert_eq!(e.targets[2].name, "default-aa2");
}

#[test]
fn unknown_key_names_line_column_and_the_allowed_keys() {
    let e = errors(&format!("clients = [1]\n[scale]\nrowz = 10\n{TARGET}"));
    assert_eq!((e[0].line, e[0].column), (3, 1));
    assert_eq!(e[0].message, "unknown key `rowz`");
    assert_eq!(e[0].help.as_deref(), Some("did you mean `rows`?"));
}

/// Regression: an unknown key hid the plan's other problems: `repeat =
/// 2`, a step `point-qeury` and `read = "5sec"` in one plan were said one
/// fix at a time.
#[test]
fn an_unknown_key_does_not_hide_the_other_problems() {
    let e = errors(&format!(
        "steps = [\"load\", \"point-qeury\"]\nrepeat = 2\n[duration]\nread = \"5sec\"\n{TARGET}"
    ));
    let said: Vec<&str> = e.iter().map(|x| x.message.as_str()).collect();
    assert_eq!(e.len(), 3, "{said:?}");
    assert!(
        said.iter().any(|m| m.contains("unknown key `repeat`")),
        "{said:?}"
    );
    assert!(said.iter().any(|m| m.contains("point-qeury")), "{said:?}");
    assert!(said.iter().any(|m| m.contains("5sec")), "{said:?}");
}

/// Regression: `check` stopped at the first unknown key with serde's list
/// of sixteen names and no did-you-mean; four mistakes took four cycles.
#[test]
fn every_unknown_key_is_reported_at_once_with_the_nearest_valid_one() {
    let text = format!(
        "repeat = 2\nclients = [1]\nsteps = [\n  \"load\",\n]\nstepz = [\n  \"point-query\",\n]\n\
         [scale]\nrowz = 10\n[duration]\nreed = \"1s\"\n{TARGET}"
    );
    let e = errors(&text);
    let got: Vec<(usize, usize, &str, Option<&str>)> = e
        .iter()
        .map(|e| (e.line, e.column, e.message.as_str(), e.help.as_deref()))
        .collect();
    assert_eq!(
        got,
        vec![
            (
                1,
                1,
                "unknown key `repeat`",
                Some("did you mean `repeats`?")
            ),
            (6, 1, "unknown key `stepz`", Some("did you mean `steps`?")),
            (10, 1, "unknown key `rowz`", Some("did you mean `rows`?")),
            (12, 1, "unknown key `reed`", Some("did you mean `read`?")),
        ]
    );
    // A real problem after them is still reported; a key missing because
    // its misspelling was blanked out is not.
    let e = errors(&format!("[scale]\nrowz = 10\ntables = \"x\"\n{TARGET}"));
    assert_eq!(e.len(), 2, "{e:?}");
    let e = errors("[[target]]\nnmae = \"a\"\nengine = \"sqlite\"\n");
    assert_eq!(e.len(), 1, "{e:?}");
    assert_eq!(e[0].help.as_deref(), Some("did you mean `name`?"));
}

#[test]
fn unknown_workload_suggests_the_near_one() {
    let e = errors(&format!("steps = [\"load\", \"point-qeury\"]\n{TARGET}"));
    assert_eq!((e[0].line, e[0].column), (1, 18));
    assert_eq!(e[0].message, "unknown step \"point-qeury\"");
    assert!(e[0]
        .help
        .as_deref()
        .unwrap()
        .contains("did you mean \"point-query\""));
}

#[test]
fn parameterised_steps_get_their_canonical_name_and_bad_ones_say_why() {
    let p = parse(
        &format!("steps = [\"load\", \"read-only-order[range=1000,order=4]:hot\"]\n[scale]\nrows = 2000\n{TARGET}"),
        "plan.toml",
        Path::new("."),
    )
    .unwrap();
    assert_eq!(p.steps[1].name(), "read-only-order[order=4,range=1000]");
    assert_eq!(
        p.steps[1].label(),
        "read-only-order[order=4,range=1000].hot"
    );
    let e = errors(&format!(
        "steps = [\"load\", \"point-query[order=4]\"]\n{TARGET}"
    ));
    assert_eq!((e[0].line, e[0].column), (1, 18));
    assert!(
        e[0].message
            .starts_with("step \"point-query[order=4]\": point-query has no mix of ranges"),
        "{}",
        e[0].message
    );
    // The table must hold the widest range the parameters ask for.
    let e = errors(&format!(
        "steps = [\"load\", \"read-only-10[range=5000]\"]\n[scale]\nrows = 2000\n{TARGET}"
    ));
    assert!(
        e[0].message.contains("rows = 2000 is too small"),
        "{}",
        e[0].message
    );
}

#[test]
fn zero_rows_is_rejected_at_its_value() {
    let e = errors(&format!("[scale]\nrows = 0\n{TARGET}"));
    assert_eq!((e[0].line, e[0].column), (2, 8));
    assert_eq!(e[0].message, "rows must be between 1 and 2000000000, not 0");
}

#[test]
fn rows_must_hold_the_widest_range() {
    let e = errors(&format!("[scale]\nrows = 500\n{TARGET}"));
    assert!(
        e[0].message.contains("read-only-10000 reads 10000 rows"),
        "{}",
        e[0].message
    );
    assert_eq!(
        e[0].help.as_deref(),
        Some("set rows to at least 10000 under [scale]")
    );
}

#[test]
fn duplicate_target_names_are_rejected() {
    let e = errors(&format!("{TARGET}{TARGET}"));
    assert_eq!(e.len(), 1);
    assert_eq!((e[0].line, e[0].column), (5, 8));
    assert_eq!(e[0].message, "target name \"a\" is used twice");
}

#[test]
fn misspelt_pragma_and_bad_value_are_both_reported() {
    let e = errors(&format!(
        "{TARGET}[target.pragmas]\nsynchronus = \"full\"\njournal_mode = \"fast\"\n"
    ));
    assert_eq!(e.len(), 2);
    assert!(e[0]
        .message
        .contains("unknown SQLite pragma \"synchronus\""));
    assert_eq!(e[0].help.as_deref(), Some("did you mean \"synchronous\"?"));
    assert_eq!(
        e[1].message,
        "\"fast\" is not a value of pragma journal_mode"
    );
}

#[test]
fn a_misspelt_engine_gets_a_suggestion() {
    let e = errors("[[target]]\nname = \"m\"\nengine = \"sqlit\"\n");
    assert_eq!(e[0].help.as_deref(), Some("did you mean \"sqlite\"?"));
}

#[test]
fn server_targets_need_a_basedir_or_a_url() {
    let e = errors("[[target]]\nname = \"m\"\nengine = \"mariadb\"\n");
    assert!(e[0].message.contains("needs `basedir`"), "{}", e[0].message);
    let e = errors(
        "[[target]]\nname = \"m\"\nengine = \"mariadb\"\nbasedir = \"/nonexistent\"\npragmas = { synchronous = 1 }\n",
    );
    assert_eq!(e.len(), 2, "{e:?}");
    assert!(
        e[0].message.contains("basedir /nonexistent does not exist"),
        "{}",
        e[0].message
    );
    assert!(
        e[1].message.contains("`pragmas` is for sqlite targets"),
        "{}",
        e[1].message
    );
}

#[test]
fn a_password_in_a_url_is_refused_without_being_repeated() {
    let e =
        errors("[[target]]\nname = \"m\"\nengine = \"mysql\"\nurl = \"mysql://u:secret@h/db\"\n");
    assert!(e[0].message.contains("password_env"), "{}", e[0].message);
    assert!(!e[0].to_string().contains("secret"));
    let e = errors("[[target]]\nname = \"m\"\nengine = \"mysql\"\nurl = \"mysql://u@h/db\"\npassword_env = \"RELBENCH_TEST_UNSET_VAR\"\n");
    assert_eq!(
        e[0].message,
        "the environment variable RELBENCH_TEST_UNSET_VAR is not set"
    );
}

#[test]
fn table_options_are_one_statements_tail() {
    let p = parse(
        &format!("{TARGET}table_options = \" STRICT \"\n"),
        "p.toml",
        Path::new("."),
    )
    .unwrap();
    assert_eq!(p.targets[0].table_options.as_deref(), Some("STRICT"));
    assert_eq!(p.targets[0].table_suffix(), " STRICT");
    for bad in ["x; DROP TABLE y", "x -- y", "x /* y */", ""] {
        let e = errors(&format!("{TARGET}table_options = \"{bad}\"\n"));
        assert!(
            e[0].message.starts_with("table_options"),
            "{bad}: {}",
            e[0].message
        );
    }
}

#[test]
fn comparisons_name_targets_of_the_plan() {
    let two = format!("{TARGET}[[target]]\nname = \"b\"\nengine = \"sqlite\"\n");
    let p = parse(
        &format!(
            "{two}[[comparison]]\ntitle = \"b on a\"\nbase = \"a\"\ntargets = [\"a\", \"b\"]\n"
        ),
        "p.toml",
        Path::new("."),
    )
    .unwrap();
    assert_eq!(p.comparisons[0].base, "a");
    assert_eq!(p.comparisons[0].targets, ["a", "b"]);
    let e = errors(&format!(
        "{two}[[comparison]]\nbase = \"a\"\ntargets = [\"bb\"]\n"
    ));
    assert_eq!(
        e[0].message,
        "the comparison names \"bb\", which is not a target of this plan"
    );
    assert_eq!(e[0].help.as_deref(), Some("did you mean \"b\"?"));
    assert_eq!((e[0].line, e[0].column), (9, 12));
}

#[test]
fn tls_is_a_mode_of_a_tcp_connection_to_a_server() {
    let url = "[[target]]\nname = \"m\"\nengine = \"mysql\"\nurl = \"mysql://u@h/db\"\n";
    let p = parse(
        &format!("{url}tls = \"required\"\n"),
        "p.toml",
        Path::new("."),
    )
    .unwrap();
    assert_eq!(p.targets[0].tls, Tls::Required);
    let e = errors(&format!("{url}tls = \"on\"\n"));
    assert_eq!(e[0].message, "unknown tls mode \"on\"");
    assert_eq!(
        e[0].help.as_deref(),
        Some("tls is one of off, preferred, required")
    );
    let e = errors(&format!("{TARGET}tls = \"required\"\n"));
    assert_eq!(e[0].message, "tls is for server targets, not sqlite");
    let e = errors(
        "[[target]]\nname = \"m\"\nengine = \"mariadb\"\nbasedir = \"/usr\"\ntransport = \"socket\"\ntls = \"preferred\"\n",
    );
    assert!(
        e[0].message.starts_with("tls is for TCP connections"),
        "{}",
        e[0].message
    );
}

#[test]
fn distributions_are_named() {
    let e = errors(&format!("distribution = \"zipf\"\n{TARGET}"));
    assert_eq!(e[0].message, "unknown distribution \"zipf\"");
    assert_eq!(
        e[0].help.as_deref(),
        Some("use one of: uniform, zipfian, hotset")
    );
    let p = parse(
        &format!("distribution = \"hotset\"\n{TARGET}"),
        "p",
        Path::new("."),
    )
    .unwrap();
    assert_eq!(p.distribution, dist::Kind::Hotset);
}

#[test]
fn load_may_only_come_first() {
    let e = errors(&format!("steps = [\"point-query\", \"load\"]\n{TARGET}"));
    assert_eq!(e[0].message, "\"load\" may only be the first step");
    assert!(parse(
        &format!("steps = [\"point-query\"]\n{TARGET}"),
        "p",
        Path::new(".")
    )
    .is_ok());
}

#[test]
fn bad_durations_say_what_a_duration_looks_like() {
    let e = errors(&format!("[duration]\nread = \"soon\"\nwrite = 0\n{TARGET}"));
    assert_eq!(e.len(), 2);
    assert!(e[0].message.contains("read is not a duration"));
    assert!(e[0].help.as_deref().unwrap().contains("\"30s\""));
    assert_eq!(e[1].message, "write must be at least 100ms");
}

#[test]
fn syntax_errors_carry_their_position() {
    let e = errors("clients = [1,\n");
    assert_eq!(e[0].file, "p.toml");
    assert!(e[0].line >= 1);
}

#[test]
fn no_targets_is_an_error() {
    let e = errors("clients = [1]\n");
    assert_eq!(e[0].message, "the plan has no [[target]]");
}

#[test]
fn internals_add_their_options_before_a_managed_servers_own_and_refuse_what_they_cannot_pass() {
    let mariadb = "[[target]]\nname = \"m\"\nengine = \"mariadb\"\nbasedir = \"/usr\"\n\
                   args = [\"--performance-schema=OFF\"]\n";
    let p = parse(
        &format!(
            "steps = [\"load\"]\n[internals]\nperformance_schema = true\n\
             instruments = [\"wait/synch/mutex/%\"]\nwait_sampling = \"off\"\n{TARGET}{mariadb}"
        ),
        "p.toml",
        Path::new("."),
    )
    .unwrap();
    let crate::db::spec::Access::Managed(m) = &p.targets[1].access else {
        panic!("managed")
    };
    // The target's own option comes last, so it wins.
    assert_eq!(
        m.args,
        [
            "--performance-schema=ON",
            "--performance-schema-instrument=wait/synch/mutex/%=ON",
            "--performance-schema=OFF"
        ]
    );
    assert_eq!(p.internals.wait_sampling(), None);
    let pg = "[[target]]\nname = \"p\"\nengine = \"postgres\"\nbasedir = \"/usr\"\n";
    let p = parse(
        &format!("steps = [\"load\"]\n[internals]\npg_stat_statements = true\n{pg}"),
        "p.toml",
        Path::new("."),
    )
    .unwrap();
    let crate::db::spec::Access::Managed(m) = &p.targets[0].access else {
        panic!("managed")
    };
    assert_eq!(
        m.args,
        ["-c", "shared_preload_libraries=pg_stat_statements"]
    );
    // Without [internals]: nothing added, PostgreSQL sampled every 100 ms.
    let p = parse(
        &format!("steps = [\"load\"]\n{TARGET}"),
        "p.toml",
        Path::new("."),
    )
    .unwrap();
    assert_eq!(p.internals.wait_sampling_ms, Some(100));
    let e = errors(&format!(
        "steps = [\"load\"]\n[internals]\ninstruments = [\"wait/%\", \"x' --init-file=/tmp/a\"]\n{TARGET}"
    ));
    assert_eq!(e.len(), 2, "{e:?}");
    assert!(
        e[0].message.contains("does not turn on"),
        "{}",
        e[0].message
    );
    assert_eq!((e[1].line, e[1].column), (3, 26));
    assert!(
        e[1].message.contains("no performance_schema instrument"),
        "{}",
        e[1].message
    );
}

/// Regression: `prepared = false` on an Insert Benchmark step was refused
/// with an error about client counts and rates; those stay the
/// benchmark's, how it sends its statements is the step's. The Insert
/// Benchmark and LinkBench send text as their originals do; sysbench's
/// workloads prepare, as sysbench does.
#[test]
fn an_insert_benchmark_step_sends_text_or_prepares_but_keeps_its_clients_and_rates() {
    let p = parse(
        &format!(
            "steps = [{{ step = \"l.i0\", prepared = true }}, \"l.x\", {{ step = \"qr100\", prepared = false }}]\n{TARGET}"
        ),
        "p.toml",
        Path::new("."),
    )
    .unwrap();
    let plain = |p: Plan| -> Vec<(String, bool)> {
        let cat = p.catalogue().unwrap();
        p.schedule(&cat)
            .executions
            .iter()
            .filter_map(|e| match &e.work {
                crate::plan::schedule::Work::Workload(w) => Some((e.id.at.step.title(), w.plain)),
                _ => None,
            })
            .collect()
    };
    let got = plain(p);
    assert!(
        got.contains(&("l.i0 prepared".to_string(), false)),
        "{got:?}"
    );
    assert!(got.contains(&("l.x".to_string(), true)), "{got:?}");
    assert!(got.contains(&("qr100".to_string(), true)), "{got:?}");
    let suite = |s: &str| parse(&format!("{s}\n{TARGET}"), "p.toml", Path::new(".")).unwrap();
    let got = plain(suite("suite = \"linkbench\""));
    assert!(got.contains(&("lb.request".to_string(), true)), "{got:?}");
    let got = plain(suite(
        "steps = [\"load\", \"point-query\", { step = \"point-query:text\", prepared = false }]",
    ));
    assert!(got.contains(&("point-query".to_string(), false)), "{got:?}");
    assert!(
        got.contains(&("point-query (text) unprepared".to_string(), true)),
        "{got:?}"
    );
    let e = errors(&format!(
        "steps = [{{ step = \"l.i0\", clients = [2] }}]\n{TARGET}"
    ));
    assert!(
        e[0].message.contains("plan's client count"),
        "{}",
        e[0].message
    );
}
