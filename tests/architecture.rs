//! The layout's one-way rules (docs/architecture.md), checked from the
//! source: every `crate::…` path in `src/` (test modules aside) names a
//! module on a lower layer than the file's own, or its own module; and no
//! two files import each other, directly or through others.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

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
    &["render", "history"],
    &["cli"],
];

fn layer_of(module: &str) -> Option<usize> {
    LAYERS.iter().position(|l| l.contains(&module))
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
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

/// The code of a file without its test module and without comments.
fn code(text: &str) -> String {
    let text = match text.find("#[cfg(test)]") {
        Some(i) => &text[..i],
        None => text,
    };
    text.lines()
        .map(|l| match l.find("//") {
            Some(i) => &l[..i],
            None => l,
        })
        .collect::<Vec<_>>()
        .join("\n")
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
