//! Step files of every schema version this relbench reads come back with
//! the identity the schedule gives their execution: a report's cells, a
//! history's series and a confirmation's jobs key on it, so an old run
//! read with a wrong identity would be compared with the wrong step.
//!
//! Versions 2 to 5 are the report fixtures as older relbench wrote them;
//! `schemas/v6`, `v7` and `v8` are three steps of a quick run (v7 and v8
//! as written, v6 as that version laid them out: pretty, one object per
//! second).

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use relbench::plan::ExecId;
use relbench::results::{load_run, step_file};

fn fixture(dir: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(dir)
}

/// Each schema version's fixture directory.
const EVERY_VERSION: &[(u32, &str)] = &[
    (2, "results-tiny"),
    (3, "results-many"),
    (4, "results-campaign"),
    (5, "results-linkbench"),
    (6, "schemas/v6"),
    (7, "schemas/v7"),
    (8, "schemas/v8"),
];

#[test]
fn every_schema_version_reads_into_the_schedules_identity() {
    for &(version, dir) in EVERY_VERSION {
        let dir = fixture(dir);
        let text = std::fs::read_to_string(dir.join("run.json")).unwrap();
        assert!(
            text.contains(&format!("\"schema_version\": {version}")),
            "{} is not a version {version} fixture",
            dir.display()
        );
        let run = load_run(&dir).unwrap_or_else(|e| panic!("{}: {e:#}", dir.display()));
        assert!(!run.steps.is_empty(), "{}: no steps read", dir.display());
        assert!(
            run.skipped.is_empty(),
            "{}: {:?}",
            dir.display(),
            run.skipped
        );
        let cat = run.info.plan.catalogue().unwrap();
        let schedule = run.info.plan.schedule(&cat);
        // The schedule's identities by where their file is.
        let by_file: HashMap<PathBuf, &ExecId> = schedule
            .executions
            .iter()
            .map(|e| (step_file(&e.id), &e.id))
            .collect();
        for s in &run.steps {
            let file = step_file(&s.id);
            assert!(
                dir.join(&file).is_file(),
                "v{version}: {} is not where its identity says ({})",
                s.id,
                file.display()
            );
            let Some(planned) = by_file.get(&file) else {
                panic!("v{version}: {} is not an execution of its run's plan", s.id);
            };
            // What a step was measured with (client counts, rate) is the
            // plan's; older files wrote only the step's name and tag.
            assert_eq!(
                (
                    &s.id.target,
                    s.id.repeat,
                    s.id.seq,
                    &s.id.at.phase,
                    s.id.at.occurrence,
                    s.id.at.clients
                ),
                (
                    &planned.target,
                    planned.repeat,
                    planned.seq,
                    &planned.at.phase,
                    planned.at.occurrence,
                    planned.at.clients
                ),
                "v{version}: {} read as {}",
                planned,
                s.id
            );
            assert_eq!(s.id.at.step.label(), planned.at.step.label(), "v{version}");
        }
    }
}

/// The identity survives a write and a read: the fields a step file has
/// been written with since version 3 are the identity's own.
#[test]
fn a_step_files_identity_round_trips() {
    let run = load_run(&fixture("schemas/v8")).unwrap();
    for s in &run.steps {
        let text = serde_json::to_string(s).unwrap();
        let back: relbench::results::StepResult = serde_json::from_str(&text).unwrap();
        assert_eq!(back.id, s.id);
        let v: serde_json::Value = serde_json::from_str(&text).unwrap();
        for field in ["target", "repeat", "seq", "kind", "occurrence", "clients"] {
            assert!(v.get(field).is_some(), "{field} missing from {text}");
        }
        assert!(
            v.get("id").is_none(),
            "the identity is the file's own fields"
        );
    }
}

/// A load's methods are a field of its result since version 8 (they were
/// a note only), and a version 7 load reads without them.
#[test]
fn a_loads_methods_are_a_typed_fact() {
    let v8 = load_run(&fixture("schemas/v8")).unwrap();
    let load = v8.steps.iter().find(|s| s.id.seq == 1).unwrap();
    assert_eq!(load.load_methods, [relbench::workload::LoadMethod::Insert]);
    let v7 = load_run(&fixture("schemas/v7")).unwrap();
    let load = v7.steps.iter().find(|s| s.id.seq == 1).unwrap();
    assert!(load.load_methods.is_empty());
}
