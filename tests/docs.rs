//! The README and the guide under `docs/guide/` as doc tests: every TOML
//! block in them is a plan `relbench check` accepts, so an example cannot
//! drift from what the parser takes. A block that names no `[[target]]`
//! shows part of a plan and is checked with a SQLite target added; config
//! files are looked up in `examples/`, as a plan there would.

mod common;

use std::path::{Path, PathBuf};

/// The documents checked: the README and every page of the guide.
fn documents() -> Vec<PathBuf> {
    let mut docs = vec![PathBuf::from("README.md")];
    let mut guide: Vec<PathBuf> = std::fs::read_dir("docs/guide")
        .expect("docs/guide is there")
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    guide.sort();
    assert!(guide.len() >= 8, "the guide has lost pages: {guide:?}");
    docs.extend(guide);
    docs
}

/// Each fenced block whose language is `toml`, with the line it starts on.
fn toml_blocks(text: &str) -> Vec<(usize, String)> {
    let mut blocks = Vec::new();
    let mut open: Option<(usize, String)> = None;
    for (n, line) in text.lines().enumerate() {
        let fence = line.trim_start().starts_with("```");
        match (&mut open, fence) {
            (None, true) => {
                let lang = line.trim_start().trim_start_matches('`').trim();
                if lang.split_whitespace().next() == Some("toml") {
                    open = Some((n + 1, String::new()));
                } else if !lang.is_empty() || line.trim() == "```" {
                    // Another language's block, or a plain one: skip to its end.
                    open = Some((0, String::new()));
                }
            }
            (Some((start, body)), true) => {
                if *start > 0 {
                    blocks.push((*start, std::mem::take(body)));
                }
                open = None;
            }
            (Some((_, body)), false) => {
                body.push_str(line);
                body.push('\n');
            }
            (None, false) => {}
        }
    }
    assert!(open.is_none(), "a fenced block is never closed");
    blocks
}

fn as_plan(block: &str) -> String {
    if block
        .lines()
        .any(|l| l.trim_start().starts_with("[[target]]"))
    {
        block.to_string()
    } else {
        format!("{block}\n[[target]]\nname = \"doc-example\"\nengine = \"sqlite\"\n")
    }
}

fn check(doc: &Path, line: usize, plan: &str) -> Result<(), String> {
    let dir = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(
        std::fs::canonicalize("examples/configs").unwrap(),
        dir.path().join("configs"),
    )
    .unwrap();
    let file = dir.path().join("plan.toml");
    std::fs::write(&file, plan).unwrap();
    let out = common::relbench()
        .arg("check")
        .arg(&file)
        // A URL target's password is read from its variable before the
        // check, as before a run.
        .env("BENCH_PASSWORD", "doc")
        .output()
        .unwrap();
    if out.status.success() {
        Ok(())
    } else {
        Err(format!(
            "{}:{line}: the plan there does not check:\n{}\n--- as checked ---\n{plan}",
            doc.display(),
            String::from_utf8_lossy(&out.stderr)
        ))
    }
}

#[test]
fn every_plan_in_the_readme_and_the_guide_checks() {
    let mut failures = Vec::new();
    let mut checked = 0;
    for doc in documents() {
        let text = std::fs::read_to_string(&doc).unwrap();
        for (line, block) in toml_blocks(&text) {
            checked += 1;
            if let Err(e) = check(&doc, line, &as_plan(&block)) {
                failures.push(e);
            }
        }
    }
    assert!(checked >= 10, "only {checked} plans found in the documents");
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
fn a_plan_block_with_a_mistake_fails_the_doc_test() {
    // The check above can fail: a misspelt step in a block is caught.
    let blocks = toml_blocks("text\n```toml\nsteps = [\"point-qeury\"]\n```\n");
    assert_eq!(blocks.len(), 1);
    let e = check(Path::new("x.md"), blocks[0].0, &as_plan(&blocks[0].1)).unwrap_err();
    assert!(e.contains("x.md:2:") && e.contains("point-query"), "{e}");
}

/// Regression: the README was a 930-line manual whose plan section began
/// at line 299. It stays a first page; the rest is the guide's.
#[test]
fn the_readme_is_a_first_page_and_links_every_guide_page() {
    let readme = std::fs::read_to_string("README.md").unwrap();
    let lines = readme.lines().count();
    assert!(lines <= 250, "README.md has {lines} lines");
    for page in documents().iter().skip(1) {
        let link = format!("({})", page.display());
        assert!(readme.contains(&link), "README.md does not link {link}");
    }
    // Links between guide pages point at pages that exist.
    for doc in documents() {
        let text = std::fs::read_to_string(&doc).unwrap();
        let base = doc.parent().unwrap();
        for part in text.split("](").skip(1) {
            let target = part.split(')').next().unwrap();
            let target = target.split('#').next().unwrap();
            if target.is_empty() || target.starts_with("http") {
                continue;
            }
            assert!(
                base.join(target).exists(),
                "{}: links {target}, which is not there",
                doc.display()
            );
        }
    }
}

/// Regression: the README's "Here is one run" block was left empty by a
/// rewrite of its verdicts, and a newcomer read prose about a table that
/// was not there. The block shows a row for every measured step of the
/// quick plan, and its summary.
#[test]
fn the_readme_shows_a_whole_quick_run() {
    let readme = std::fs::read_to_string("README.md").unwrap();
    let after = readme
        .split_once("Here is one run")
        .expect("the README introduces its quick run")
        .1;
    let block = after
        .split_once("```\n")
        .and_then(|(_, rest)| rest.split_once("```"))
        .expect("a code block after the introduction")
        .0;
    let plan = std::fs::read_to_string("src/plan/quick.toml").unwrap();
    let steps = plan
        .split_once("steps = [")
        .and_then(|(_, rest)| rest.split_once(']'))
        .unwrap()
        .0;
    let steps: Vec<&str> = steps
        .split(',')
        .map(|s| s.trim().trim_matches('"'))
        .filter(|s| !s.is_empty() && *s != "settle")
        .collect();
    assert!(steps.len() >= 5, "{steps:?}");
    for step in steps {
        assert!(
            block.lines().any(|l| l.starts_with(&format!("{step} "))),
            "the README's quick run has no row for {step}:\n{block}"
        );
    }
    assert!(
        block.contains("wal against default:"),
        "no summary:\n{block}"
    );
}
