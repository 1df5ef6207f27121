//! Reading a results file of any schema version this relbench knows:
//! files of this version straight into their type, older ones upgraded
//! as they are read, newer ones refused with what to do.

use std::path::Path;

use anyhow::{bail, Context};
use serde::Deserialize;

use super::SCHEMA_VERSION;
use crate::plan::Step;

/// The oldest version this relbench reads; older files are upgraded as
/// they are read (version 2 named a step by one `"step": "scan.warm"`
/// string and had no occurrence).
const OLDEST_READ: u32 = 2;

pub(super) fn read_json<T: for<'de> Deserialize<'de>>(path: &Path) -> anyhow::Result<T> {
    // A FIFO or a device named like a result would block or never end.
    let bytes = crate::util::read_record(path, crate::util::MAX_RECORD_BYTES)?;
    let text =
        String::from_utf8(bytes).with_context(|| format!("{} is not text", path.display()))?;
    // Files of this version are read straight into their type; only older
    // ones go through a JSON value to be upgraded (the value cost a
    // 20,000-file report a fifth of its time).
    #[derive(Deserialize)]
    struct Version {
        schema_version: Option<u64>,
    }
    if let Ok(Version {
        schema_version: Some(n),
    }) = serde_json::from_str::<Version>(&text)
    {
        if n as u32 == SCHEMA_VERSION {
            return serde_json::from_str(&text)
                .with_context(|| format!("{} does not match the results schema", path.display()));
        }
    }
    let v: serde_json::Value = serde_json::from_str(&text)
        .with_context(|| format!("{} is not valid JSON", path.display()))?;
    let mut v = v;
    match v.get("schema_version").and_then(|s| s.as_u64()) {
        Some(n) if n as u32 == SCHEMA_VERSION => {}
        Some(n) if n as u32 >= OLDEST_READ && (n as u32) < SCHEMA_VERSION => upgrade(&mut v),
        Some(n) if n as u32 > SCHEMA_VERSION => bail!(
            "{} was written by a newer relbench (schema version {n}, this one reads {SCHEMA_VERSION}); upgrade relbench to read it",
            path.display()
        ),
        Some(n) => bail!(
            "{} has schema version {n}, which this relbench (version {SCHEMA_VERSION}) cannot read",
            path.display()
        ),
        None => bail!("{} has no schema_version: it is not a relbench results file", path.display()),
    }
    serde_json::from_value(v)
        .with_context(|| format!("{} does not match the results schema", path.display()))
}

/// Version 7 → 8 added a load's methods as a field of its own
/// (`load_methods`; the note `load_method` stays, in words), which a
/// version 7 file goes without: its run recorded them with the target's
/// settings already. Version 6 → 7 changed how step files are written, not what they
/// mean: compact JSON, the per-second series and each class's seconds as
/// columns (both shapes are read, so a version 6 file needs nothing but
/// its number). Version 5 → 6 only added the plan's hash and a shard's record, which
/// a version 5 run goes without. Version 4 → 5 only added fields a version 4 file goes without (tallies,
/// the latency quartiles): its number changes. Version 3 → 4 only added fields a version 3 file goes without (phase,
/// server settings, interval, maintenance steps, allocated sizes): its
/// number changes. Version 2 → 3: a step result's `"step": "name.tag"` and `"kind"`
/// become the plan's step (kind, workload, tag); its occurrence is filled
/// in by [`load_run`], which sees the other steps of the run.
fn upgrade(v: &mut serde_json::Value) {
    let Some(obj) = v.as_object_mut() else {
        return;
    };
    obj.insert("schema_version".into(), SCHEMA_VERSION.into());
    let Some(label) = obj
        .remove("step")
        .and_then(|s| s.as_str().map(String::from))
    else {
        return;
    };
    let kind = obj
        .get("kind")
        .and_then(|k| k.as_str())
        .unwrap_or("workload")
        .to_string();
    let step = Step::from_label(&label, kind == "workload");
    if let Ok(serde_json::Value::Object(fields)) = serde_json::to_value(&step) {
        obj.remove("kind");
        obj.extend(fields);
    }
    obj.insert("occurrence".into(), 0.into());
}
