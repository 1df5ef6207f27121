//! The layout's one-way rules (docs/architecture.md), checked from the
//! source: every `crate::…` path in `src/` (test modules aside) names a
//! module on a lower layer than the file's own, or its own module; and no
//! two files import each other, directly or through others.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::Path;

mod source;
use source::*;

/// The layers, lowest first. A module may use modules of lower layers and
/// itself, never one beside it or above it. Keep in step with
/// docs/architecture.md.
const LAYERS: &[&[&str]] = &[
    &["measure", "util"],
    &["db", "metrics"],
    &["workload"],
    &["plan"],
    &["engine", "results"],
    &["runner", "compare"],
    &["history", "study"],
    &["render"],
    &["cli"],
];

fn layer_of(module: &str) -> Option<usize> {
    LAYERS.iter().position(|l| l.contains(&module))
}

/// The file's module path (`render::svg`, `db`), from its place under src/.
fn module_of(src: &Path, file: &Path) -> Vec<String> {
    let rel = file.strip_prefix(src).unwrap().with_extension("");
    let mut parts: Vec<String> = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    if matches!(
        parts.last().map(String::as_str),
        Some("mod" | "lib" | "main")
    ) {
        parts.pop();
    }
    parts
}

/// Every function with a body in a blanked text (methods and nested
/// functions too): its name and its span, from `fn` to its closing brace.
fn function_spans(blank: &str) -> Vec<(String, usize, usize)> {
    let bytes = blank.as_bytes();
    let mut out = Vec::new();
    let mut at = 0;
    while let Some(n) = blank[at..].find("fn ") {
        let i = at + n;
        at = i + 3;
        if i > 0 && (bytes[i - 1].is_ascii_alphanumeric() || bytes[i - 1] == b'_') {
            continue;
        }
        let name: String = blank[i + 3..]
            .trim_start()
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        let end = item_end(blank, i);
        // A declaration (`fn f();` in a trait) has no body.
        if !name.is_empty() && bytes[end - 1] == b'}' {
            out.push((name, i, end));
        }
    }
    out
}

/// Every function of a file outside its test items: its name, first line
/// and length in lines, from the `fn` line to its closing brace's.
fn functions(text: &str) -> Vec<(String, usize, usize)> {
    let blank = non_test(text);
    function_spans(&blank)
        .into_iter()
        .map(|(name, a, b)| {
            let first = blank[..a].matches('\n').count() + 1;
            let last = blank[..b].matches('\n').count() + 1;
            (name, first, last - first + 1)
        })
        .collect()
}

/// Every module path a file names through `crate::a::b` (also inside
/// `use crate::{a, b::c}` groups), cut to the known files.
fn crate_paths(code: &str) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    let mut rest = code;
    while let Some(i) = rest.find("crate::") {
        rest = &rest[i + "crate::".len()..];
        if let Some(group) = rest.strip_prefix('{') {
            let end = group.find('}').unwrap_or(group.len());
            for item in group[..end].split(',') {
                let path: Vec<String> = item
                    .trim()
                    .split("::")
                    .map(|s| s.trim().to_string())
                    .take_while(|s| {
                        !s.is_empty() && s.chars().all(|c| c.is_alphanumeric() || c == '_')
                    })
                    .collect();
                if !path.is_empty() {
                    out.push(path);
                }
            }
            continue;
        }
        // Segments up to the first that does not end where its word does
        // (`Step;` ends the path `plan::Step`).
        let mut path: Vec<String> = Vec::new();
        for seg in rest.split("::") {
            let word: String = seg
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            if word.is_empty() {
                break;
            }
            let whole = word.len() == seg.len();
            path.push(word);
            if !whole {
                break;
            }
        }
        if !path.is_empty() {
            out.push(path);
        }
    }
    out
}

struct Tree {
    /// File module paths, joined by `::`.
    files: BTreeSet<String>,
    /// File → the files it imports.
    edges: BTreeMap<String, BTreeSet<String>>,
}

fn tree() -> Tree {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut paths = Vec::new();
    rust_files(&src, &mut paths);
    let files: BTreeSet<String> = paths
        .iter()
        .map(|p| module_of(&src, p).join("::"))
        .collect();
    let mut edges = BTreeMap::new();
    for p in &paths {
        let me = module_of(&src, p).join("::");
        let text = code(&fs::read_to_string(p).unwrap());
        let mut to = BTreeSet::new();
        for path in crate_paths(&text) {
            // The longest prefix of the path that is a file.
            let target = (1..=path.len())
                .rev()
                .map(|n| path[..n].join("::"))
                .find(|m| files.contains(m));
            if let Some(t) = target {
                if t != me {
                    to.insert(t);
                }
            }
        }
        edges.insert(me, to);
    }
    Tree { files, edges }
}

fn top(module: &str) -> &str {
    module.split("::").next().unwrap_or(module)
}

/// Each import that does not point down the layers, in words.
fn against_layers(t: &Tree) -> Vec<String> {
    let mut wrong = Vec::new();
    for (from, tos) in &t.edges {
        if from.is_empty() {
            continue; // lib.rs declares the modules
        }
        let Some(mine) = layer_of(top(from)) else {
            wrong.push(format!(
                "{from}: its module is on no layer; add it to LAYERS and docs/architecture.md"
            ));
            continue;
        };
        for to in tos {
            if to.is_empty() || top(to) == top(from) {
                continue;
            }
            match layer_of(top(to)) {
                Some(theirs) if theirs < mine => {}
                _ => wrong.push(format!(
                    "{from} imports {to}, which is not on a lower layer"
                )),
            }
        }
    }
    wrong
}

#[test]
fn every_import_points_down_the_layers() {
    let wrong = against_layers(&tree());
    assert!(
        wrong.is_empty(),
        "imports against the layers:\n{}",
        wrong.join("\n")
    );
}

/// The first import circle among the files, if any (depth-first search).
fn circle(t: &Tree) -> Option<Vec<String>> {
    fn visit(
        n: &str,
        t: &Tree,
        state: &mut BTreeMap<String, u8>,
        stack: &mut Vec<String>,
    ) -> Option<Vec<String>> {
        state.insert(n.to_string(), 1);
        stack.push(n.to_string());
        for m in t.edges.get(n).into_iter().flatten() {
            match state.get(m.as_str()).copied().unwrap_or(0) {
                1 => {
                    let i = stack.iter().position(|x| x == m).unwrap();
                    let mut c = stack[i..].to_vec();
                    c.push(m.clone());
                    return Some(c);
                }
                0 => {
                    if let Some(c) = visit(m, t, state, stack) {
                        return Some(c);
                    }
                }
                _ => {}
            }
        }
        stack.pop();
        state.insert(n.to_string(), 2);
        None
    }
    let mut state = BTreeMap::new();
    for f in &t.files {
        if state.get(f.as_str()).copied().unwrap_or(0) == 0 {
            if let Some(c) = visit(f, t, &mut state, &mut Vec::new()) {
                return Some(c);
            }
        }
    }
    None
}

#[test]
fn no_files_import_each_other() {
    if let Some(c) = circle(&tree()) {
        panic!("an import circle: {}", c.join(" -> "));
    }
}

#[test]
fn the_checker_sees_what_it_checks() {
    // A checker that finds no imports would pass everything.
    let paths = crate_paths(&code(
        "use crate::{db::Driver, measure};\nuse crate::plan::Step; // crate::cli\nlet x = crate::util::f();",
    ));
    assert_eq!(
        paths,
        [
            vec!["db".to_string(), "Driver".into()],
            vec!["measure".into()],
            vec!["plan".into(), "Step".into()],
            vec!["util".into(), "f".into()],
        ]
    );
    let t = tree();
    assert!(
        t.edges["runner::step"].contains("engine"),
        "{:?}",
        t.edges["runner::step"]
    );
    assert!(t.edges.values().map(BTreeSet::len).sum::<usize>() > 50);
    // An upward and a sideways import are both caught.
    let bad = Tree {
        files: ["measure::units", "render", "engine", "results"]
            .map(String::from)
            .into(),
        edges: [
            (
                "measure::units".to_string(),
                BTreeSet::from(["render".to_string()]),
            ),
            (
                "engine".to_string(),
                BTreeSet::from(["results".to_string()]),
            ),
        ]
        .into(),
    };
    assert_eq!(against_layers(&bad).len(), 2, "{:?}", against_layers(&bad));
    // The circle the old report module had: its charts and its HTML.
    let round = Tree {
        files: ["render::svg", "render::html"].map(String::from).into(),
        edges: [
            (
                "render::svg".to_string(),
                BTreeSet::from(["render::html".to_string()]),
            ),
            (
                "render::html".to_string(),
                BTreeSet::from(["render::svg".to_string()]),
            ),
        ]
        .into(),
    };
    assert!(circle(&round).is_some());
}

#[test]
fn the_runner_names_no_engine_and_no_workload() {
    // The runner sequences; which engine or workload a step uses is the
    // plan's and db::open's business, and what a step does is the
    // workload's answer (`Meta`), never a test of its name.
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/runner");
    let mut files = Vec::new();
    rust_files(&dir, &mut files);
    let mut names: Vec<String> = [
        "sqlite", "mysql", "mariadb", "postgres", "sysbench", "sbtest", "innodb", "rocksdb",
    ]
    .map(String::from)
    .into();
    names.extend(
        relbench::workload::catalogue::Catalogue::builtin()
            .names()
            .map(|n| format!("\"{n}\"")),
    );
    let mut found = Vec::new();
    for f in &files {
        let text = code(&fs::read_to_string(f).unwrap()).to_lowercase();
        for n in &names {
            if text.contains(n.as_str()) {
                found.push(format!("{}: {n}", f.display()));
            }
        }
        for path in crate_paths(&text) {
            let p = path.join("::");
            if p.starts_with("workload::sysbench")
                || p.starts_with("workload::insert")
                || ["db::mysql", "db::postgres", "db::sqlite", "db::server"]
                    .iter()
                    .any(|e| p.starts_with(e))
            {
                found.push(format!("{}: crate::{p}", f.display()));
            }
        }
    }
    assert!(
        found.is_empty(),
        "the runner names engines or workloads:\n{}",
        found.join("\n")
    );
}

/// Regression for the registries the catalogue replaced: a plan's
/// workloads, parameterised sysbench entries and q-steps were found by
/// name through process-wide lists of leaked entries, which a plan read
/// back from run.json had to remember to fill (a missed call was a bug).
#[test]
fn no_workload_registry_and_no_leaked_entries() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src.join("workload"), &mut files);
    rust_files(&src.join("plan"), &mut files);
    let mut found = Vec::new();
    for f in &files {
        let text = code(&fs::read_to_string(f).unwrap());
        for bad in [
            "Box::leak",
            "static MADE",
            "static REGISTERED",
            "Mutex<Vec<&'static",
        ] {
            if text.contains(bad) {
                found.push(format!("{}: {bad}", f.display()));
            }
        }
    }
    let mut all = Vec::new();
    rust_files(&src, &mut all);
    for f in &all {
        if fs::read_to_string(f)
            .unwrap()
            .contains("register_workloads")
        {
            found.push(format!("{}: register_workloads", f.display()));
        }
    }
    assert!(found.is_empty(), "{}", found.join("\n"));
}

/// The runner runs what the schedule says: of the plan it may name only
/// the schedule's types (`crate::plan::schedule::…`), never the plan
/// itself, so it cannot go back to the plan for a step.
#[test]
fn the_runner_asks_the_plan_nothing() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/runner");
    let mut files = Vec::new();
    rust_files(&dir, &mut files);
    let mut found = Vec::new();
    for f in &files {
        let text = code(&fs::read_to_string(f).unwrap());
        for path in crate_paths(&text) {
            if path.first().map(String::as_str) == Some("plan")
                && path.get(1).map(String::as_str) != Some("schedule")
            {
                found.push(format!("{}: crate::{}", f.display(), path.join("::")));
            }
        }
        if text.contains("Plan") && text.contains("plan::Plan") {
            found.push(format!("{}: names Plan", f.display()));
        }
    }
    assert!(
        found.is_empty(),
        "the runner reaches into the plan:\n{}",
        found.join("\n")
    );
}

/// Files that each hold one concern: none over 1,000 lines, and none but
/// a catalogue (sysbench's table of microbenchmarks) over 800.
#[test]
fn no_file_holds_several_concerns() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let catalogues = ["workload/sysbench/mod.rs"];
    let mut long = Vec::new();
    for f in &files {
        let n = fs::read_to_string(f).unwrap().lines().count();
        let rel = f.strip_prefix(&src).unwrap().display().to_string();
        let limit = if catalogues.contains(&rel.as_str()) {
            1000
        } else {
            800
        };
        if n > limit {
            long.push(format!("{rel}: {n} lines (at most {limit})"));
        }
    }
    assert!(
        long.is_empty(),
        "split along the seams:\n{}",
        long.join("\n")
    );
}

/// A family's parameters are named in its own folder: the plan parser,
/// the schedule and the command line ask the family (its `Params`, its
/// catalogue entries), never read `[linkbench]`'s or `[insert]`'s keys.
#[test]
fn family_parameters_stay_in_their_folders() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let keys = [
        "maxid1",
        "startid1",
        "requestrate",
        "loader_chunk_size",
        "bulk_insert_batch",
        "l_i1_rows",
        "l_i2_rows",
        "q_commit",
        "shared_table",
    ];
    let mut found = Vec::new();
    for f in &files {
        let rel = f.strip_prefix(&src).unwrap().display().to_string();
        // Test modules write plans with the keys in them.
        if rel.starts_with("workload/linkbench")
            || rel.starts_with("workload/insert")
            || rel.ends_with("/tests.rs")
        {
            continue;
        }
        let text = code(&fs::read_to_string(f).unwrap());
        for k in keys {
            if text.contains(k) {
                found.push(format!("{rel}: {k}"));
            }
        }
    }
    assert!(found.is_empty(), "{}", found.join("\n"));
}

/// Renderers format, never judge: every verdict (a colour, a `~`, a
/// cost left uncoloured because it is too small to matter) is the
/// model's answer, so every format shows the same judgement.
#[test]
fn renderers_never_judge() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/render");
    let mut files = Vec::new();
    rust_files(&dir, &mut files);
    let judges = [
        "compare::verdict",
        "compare::cost_verdict",
        "compare::judged",
        "compare::cost_matters",
        "compare::superseded",
    ];
    let mut found = Vec::new();
    for f in &files {
        let text = code(&fs::read_to_string(f).unwrap());
        for path in crate_paths(&text) {
            let p = path.join("::");
            if judges.iter().any(|j| p == *j) {
                found.push(format!("{}: crate::{p}", f.display()));
            }
        }
    }
    assert!(found.is_empty(), "renderers judging:\n{}", found.join("\n"));
}

/// Every function of `src/`, outside test items: (file, name, line, length).
fn all_functions() -> Vec<(String, String, usize, usize)> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let mut out = Vec::new();
    for f in &files {
        let rel = f.strip_prefix(&src).unwrap().display().to_string();
        for (name, line, len) in functions(&fs::read_to_string(f).unwrap()) {
            out.push((rel.clone(), name, line, len));
        }
    }
    out.sort_by(|a, b| b.3.cmp(&a.3).then_with(|| a.0.cmp(&b.0)));
    out
}

/// No function over 150 lines, and at most 2% over 100 (hyperfine
/// 2.4%, latte 1.7%): a function that long holds several steps that want
/// names of their own.
const LONGEST: usize = 150;
const SHARE_OVER_100: f64 = 0.02;

/// Function lengths, printed (`cargo test --test architecture
/// functions_stay_short -- --nocapture`, or `bench/function_lengths.sh`),
/// and held to the limits.
#[test]
fn functions_stay_short() {
    let all = all_functions();
    let over = |n: usize| all.iter().filter(|f| f.3 > n).count();
    println!(
        "{} functions in src/ (test items aside): {} over 100 lines ({:.1}%), {} over 150, the longest {} lines",
        all.len(),
        over(100),
        100.0 * over(100) as f64 / all.len() as f64,
        over(150),
        all.first().map_or(0, |f| f.3)
    );
    for (file, name, line, len) in all.iter().take_while(|f| f.3 > 100) {
        println!("{len:5}  {file}:{line}  {name}");
    }
    let longest = all.first().map_or(0, |f| f.3);
    assert!(
        longest <= LONGEST,
        "{} is {longest} lines, over {LONGEST}: split it along its seams",
        all.first()
            .map(|f| format!("{}:{} {}", f.0, f.2, f.1))
            .unwrap_or_default()
    );
    assert!(
        over(100) as f64 <= SHARE_OVER_100 * all.len() as f64,
        "{} functions of {} are over 100 lines, more than {:.0}%: split the longest along their seams",
        over(100),
        all.len(),
        SHARE_OVER_100 * 100.0
    );
}

/// Each rule of this file can fail: the readers see code after an early
/// `mod tests;` and past braces in literals, and the function counter
/// finds a long function.
#[test]
fn each_rule_can_fail() {
    // `src/plan/parse/mod.rs` has `mod tests;` on line 11: the reader
    // used to stop there and check nothing below it.
    let early = "mod a;\n#[cfg(test)]\nmod tests;\nuse crate::render::x;\n";
    assert!(crate_paths(&code(early)).contains(&vec!["render".to_string(), "x".into()]));
    let inline = "#[cfg(test)]\nmod tests {\n    fn f() { let _ = \"{\"; let _ = '{'; }\n    use crate::cli::hidden;\n}\nuse crate::cli::y;\n";
    let paths = crate_paths(&code(inline));
    assert_eq!(paths, [vec!["cli".to_string(), "y".into()]], "{paths:?}");
    // A file that imports upward past its test module fails the layers.
    let t = Tree {
        files: ["measure", "render"].map(String::from).into(),
        edges: [(
            "measure".to_string(),
            crate_paths(&code(early))
                .into_iter()
                .map(|p| p[0].clone())
                .collect(),
        )]
        .into(),
    };
    assert_eq!(against_layers(&t).len(), 1);
    // The counter: a 160-line function, a signature with `[u8; 4]`, a
    // declaration without a body, and a test's function left out.
    let body = "    let _ = 1;\n".repeat(158);
    let text = format!(
        "trait T {{ fn g(&self); }}\nfn long(x: [u8; 4]) {{\n{body}}}\n#[cfg(test)]\nmod tests {{ fn t() {{}} }}\n"
    );
    let fns = functions(&text);
    assert_eq!(fns, [("long".to_string(), 2, 160)], "{fns:?}");
}

/// The schedule's identity is what every output keys on: a step result
/// carries its `ExecId`, a report's rows, a history's series and a
/// confirmation's jobs its `StepId`. Regression for the keys they had
/// each made of their own (a six-field row tuple matched by position,
/// a string `step_key`, a target found again by its name).
#[test]
fn reports_and_histories_key_on_the_schedules_identity() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let read = |f: &str| code(&fs::read_to_string(src.join(f)).unwrap());
    let body_of = |text: &str, item: &str| -> String {
        let blank = blanked(text, true);
        let at = blank.find(item).unwrap_or_else(|| panic!("no {item}"));
        text[at..item_end(&blank, at)].to_string()
    };
    for (file, item, field) in [
        ("results/mod.rs", "pub struct StepResult", "id: ExecId"),
        ("compare/mod.rs", "pub struct Row ", "id: StepId"),
        ("compare/mod.rs", "pub struct Unsettled", "at: StepId"),
        ("runner/confirm.rs", "pub struct Need", "at: StepId"),
        ("history/import.rs", "struct Cell", "step: StepId"),
    ] {
        let body = body_of(&read(file), item);
        assert!(
            body.contains(field),
            "{file}: {item} does not key on `{field}`:\n{body}"
        );
    }
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let mut found = Vec::new();
    for f in &files {
        let text = code(&fs::read_to_string(f).unwrap());
        for bad in ["fn step_key", "Vec<(usize, Step, u32, u32"] {
            if text.contains(bad) {
                found.push(format!("{}: {bad}", f.display()));
            }
        }
    }
    // A confirmation's jobs are found by identity, not by the position of
    // a target's name.
    for f in ["cli/run.rs", "runner/confirm.rs"] {
        if read(f).contains(".position(|t| t.name") {
            found.push(format!("{f}: a target found by its name"));
        }
    }
    assert!(found.is_empty(), "keys of their own:\n{}", found.join("\n"));
}

/// `run.json` is written in one function (`results::write_run_info`), and
/// the runner calls it from one place (its record sink). Regression for
/// the nine call sites that rewrote it from the loop.
#[test]
fn one_function_writes_the_run_record() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let (mut writers, mut callers) = (Vec::new(), Vec::new());
    for f in &files {
        let rel = f.strip_prefix(&src).unwrap().display().to_string();
        let text = fs::read_to_string(f).unwrap();
        // Literals kept: a `"run.json"` written out is a writer too.
        let blank = non_test(&text);
        let kept = blanked(&text, false);
        for (name, a, b) in function_spans(&blank) {
            let body = &kept[a..b];
            // A write whose arguments name the file.
            let writes = ["write_atomic(", "write_file(", "fs::write("]
                .iter()
                .any(|w| {
                    body.match_indices(w).any(|(i, _)| {
                        let args = &body[i + w.len()..];
                        let args = &args[..args.find(';').unwrap_or(args.len())];
                        args.contains("RUN_FILE") || args.contains("\"run.json\"")
                    })
                });
            if writes {
                writers.push(format!("{rel} {name}"));
            }
            if rel.starts_with("runner/") && body.contains("write_run_info(") {
                callers.push(format!("{rel} {name}"));
            }
        }
    }
    assert_eq!(
        writers,
        ["results/mod.rs write_run_info"],
        "writers of run.json"
    );
    assert_eq!(
        callers,
        ["runner/record.rs save"],
        "the runner's writers of its record"
    );
}

/// A run's sinks are assembled in one place (`runner::Session::sinks`),
/// and only the session ends a run: every pass (a run, `--resume`,
/// `--confirm`, an adaptive round) hears the same list and `Ended` fires
/// once. Regressions: the confirmation's own list had no profile files;
/// `run --history` imported an adaptive run before its rounds.
#[test]
fn sinks_are_assembled_in_one_place() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let (mut assembled, mut ended) = (Vec::new(), Vec::new());
    for f in &files {
        let rel = f.strip_prefix(&src).unwrap().display().to_string();
        let blank = non_test(&fs::read_to_string(f).unwrap());
        for (name, a, b) in function_spans(&blank) {
            let body = &blank[a..b];
            if body.contains("Sinks::new(") {
                assembled.push(format!("{rel} {name}"));
            }
            if body.contains("emit(&Event::Ended(") {
                ended.push(format!("{rel} {name}"));
            }
        }
    }
    assert_eq!(
        assembled,
        ["runner/session.rs sinks"],
        "where sinks are assembled"
    );
    assert!(
        ended.iter().all(|e| e.starts_with("runner/session.rs ")),
        "only the session ends a run: {ended:?}"
    );
}

/// The terminal is a sink (`runner/progress.rs`): nothing else in the
/// runner prints or names it, so a run's progress, its lines and its
/// warnings reach every sink alike (`run --events` hears what the
/// terminal shows).
#[test]
fn no_terminal_ui_call_in_the_runner() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src.join("runner"), &mut files);
    let mut found = Vec::new();
    for f in &files {
        let rel = f.strip_prefix(&src).unwrap().display().to_string();
        if rel == "runner/progress.rs" {
            continue;
        }
        let code = non_test(&fs::read_to_string(f).unwrap());
        for word in [
            "Progress",
            "errln!",
            "eprintln!",
            "println!",
            "outln!",
            "err!(",
        ] {
            if code.contains(word) && !(rel == "runner/mod.rs" && word == "Progress") {
                found.push(format!("{rel}: {word}"));
            }
        }
    }
    assert!(found.is_empty(), "terminal calls in the runner: {found:?}");
}

/// No error is told apart by its text: a server's code
/// (`db::ServerCode`), a typed error (`lua::state::Blame`) or a flag
/// (`perf::Stopped::denied`) says what it is. Regressions: a MySQL
/// privilege error found by "1227" or "Access denied" in its message, a
/// missing PostgreSQL database by "does not exist", a script option by
/// "is not an option", perf's refusal by "may not".
#[test]
fn no_error_is_told_apart_by_its_text() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let errorish = [
        "to_string()",
        "message",
        "e",
        "err",
        "error",
        "why",
        "e.0",
        "msg",
        "last",
    ];
    let mut found = Vec::new();
    for f in &files {
        let rel = f.strip_prefix(&src).unwrap().display().to_string();
        if rel.ends_with("tests.rs") || rel.contains("/tests/") {
            continue;
        }
        let code = non_test(&fs::read_to_string(f).unwrap());
        for (i, _) in code.match_indices(".contains(") {
            let before = &code[..i];
            let start = before
                .rfind(|c: char| !(c.is_alphanumeric() || "_.()".contains(c)))
                .map_or(0, |p| p + 1);
            let receiver = &before[start..];
            let last = receiver.rsplit('.').next().unwrap_or(receiver);
            let tail2 = receiver.rsplitn(3, '.').take(2).collect::<Vec<_>>();
            let hit = errorish.contains(&last)
                || errorish.contains(&receiver)
                || tail2.join(".") == "0.e"
                || receiver.ends_with("to_string()");
            if hit {
                let line = code[..i].lines().count();
                found.push(format!("{rel}:{line}: {receiver}.contains("));
            }
        }
    }
    assert!(
        found.is_empty(),
        "errors told apart by their text:\n{}",
        found.join("\n")
    );
}

/// Where a history-store source makes SQL from a value instead of binding
/// it: a literal made by a helper (`lit(`, `num(`) or a formatted value
/// quoted in a statement's text (`'{`).
fn unbound_values(rel: &str, text: &str) -> Vec<String> {
    let mut found = Vec::new();
    let code = non_test(text);
    for word in ["lit(", "num("] {
        for (i, _) in code.match_indices(word) {
            let ident = code[..i]
                .chars()
                .next_back()
                .is_some_and(|c| c.is_alphanumeric() || c == '_');
            if !ident {
                found.push(format!("{rel}:{}: {word}", code[..i].lines().count()));
            }
        }
    }
    for (n, line) in text.lines().enumerate() {
        if line.contains("'{") {
            found.push(format!("{rel}:{}: '{{", n + 1));
        }
    }
    found
}

/// The history store binds every value to a placeholder (`$1`, …): a
/// build name, a directory or a host is never part of a statement's text.
/// Regression: with `standard_conforming_strings = off` on a PostgreSQL
/// history, a build name ending in `\'` ran its own SQL; the store then
/// escaped quotes itself (`lit()`, 35 places) and had to check the
/// server's setting to be safe.
#[test]
fn the_history_store_binds_every_value() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src.join("history"), &mut files);
    let mut found = Vec::new();
    for f in &files {
        let rel = f.strip_prefix(&src).unwrap().display().to_string();
        found.extend(unbound_values(&rel, &fs::read_to_string(f).unwrap()));
    }
    assert!(
        found.is_empty(),
        "values written into the history's SQL text:\n{}",
        found.join("\n")
    );
    // The rule sees what it looks for, and not a name that ends alike.
    let bad = "fn f() { s.push_str(&format!(\"WHERE a = {}\", lit(&x))); }\n\
               fn g() { q(format!(\"WHERE b = '{x}'\")); }\n\
               fn h() { split(x); }\n";
    assert_eq!(unbound_values("x.rs", bad).len(), 2, "{bad}");
}
