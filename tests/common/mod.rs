//! Helpers shared by the integration tests, which run the real binary.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

pub const TINY: &str = include_str!("../fixtures/tiny.toml");

pub fn relbench() -> assert_cmd::Command {
    assert_cmd::Command::cargo_bin("relbench").expect("the binary is built")
}

/// `relbench run -q PLAN --out OUT`, ready for more arguments or `.assert()`.
pub fn run_quiet(plan: &Path, out: impl AsRef<std::ffi::OsStr>) -> assert_cmd::Command {
    let mut c = relbench();
    c.args(["run", "-q"]).arg(plan).arg("--out").arg(out);
    c
}

pub fn bin() -> PathBuf {
    assert_cmd::cargo::cargo_bin("relbench")
}

/// Writes `text` as `plan.toml` in `dir` and returns its path.
pub fn write_plan(dir: &Path, text: &str) -> PathBuf {
    let p = dir.join("plan.toml");
    std::fs::write(&p, text).unwrap();
    p
}

/// The step result files of a results directory, as `target/file` names.
pub fn step_files(out: &Path) -> Vec<String> {
    let mut files = Vec::new();
    let steps = out.join("steps");
    let Ok(targets) = std::fs::read_dir(&steps) else {
        return files;
    };
    for t in targets {
        let t = t.unwrap().path();
        for f in std::fs::read_dir(&t).unwrap() {
            let f = f.unwrap().path();
            files.push(format!(
                "{}/{}",
                t.file_name().unwrap().to_string_lossy(),
                f.file_name().unwrap().to_string_lossy()
            ));
        }
    }
    files.sort();
    files
}

pub fn read_json(p: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()
}
