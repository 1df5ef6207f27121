//! The host settings that bend a benchmark — CPU frequency governor and
//! boost, SMT, transparent huge pages, swappiness, the CPU-vulnerability
//! mitigations and microcode, NUMA layout, the clock source, each disk's
//! IO scheduler and write cache — read from `/sys` and `/proc`, with what
//! a benchmark host should have (as pyperf's `system show` says), and the
//! usual ones set for a run and put back (`relbench host tune/reset`).
//!
//! Every reader takes the filesystem's root, so tests read and write a
//! tree of their own.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// What a fact is when the machine does not say (a VM without cpufreq).
pub const UNKNOWN: &str = "unknown";

/// One fact: its value, and what a benchmark host should have (None:
/// recorded, no advice).
#[derive(Debug, Clone, PartialEq)]
pub struct Fact {
    pub name: &'static str,
    pub value: String,
    pub advice: Option<&'static str>,
    /// Whether the value is what the advice asks (None without advice, or
    /// unknown).
    pub ok: Option<bool>,
}

/// The facts a history's series and a merge compare hosts by: the ones
/// that move a benchmark's figures.
pub const COMPARED: [&str; 6] = [
    "governor",
    "boost",
    "smt",
    "thp",
    "mitigations",
    "microcode",
];

fn read(root: &Path, path: &str) -> Option<String> {
    std::fs::read_to_string(root.join(path.trim_start_matches('/')))
        .ok()
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
}

/// The bracketed choice of a sysfs selector (`always [madvise] never`).
fn selected(s: &str) -> String {
    s.split_whitespace()
        .find_map(|w| w.strip_prefix('[')?.strip_suffix(']'))
        .unwrap_or(s)
        .to_string()
}

/// The CPUs' directories under `root`'s `/sys`.
fn cpus(root: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(root.join("sys/devices/system/cpu"))
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .and_then(|n| n.strip_prefix("cpu"))
                .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
        })
        .collect();
    v.sort();
    v
}

/// Every CPU's value of a cpufreq file, said once when they agree.
fn per_cpu(root: &Path, file: &str) -> String {
    let mut vals: Vec<String> = cpus(root)
        .iter()
        .filter_map(|c| std::fs::read_to_string(c.join("cpufreq").join(file)).ok())
        .map(|s| s.trim().to_string())
        .collect();
    vals.sort();
    vals.dedup();
    match vals.len() {
        0 => UNKNOWN.into(),
        1 => vals.remove(0),
        _ => format!("mixed: {}", vals.join(", ")),
    }
}

/// Frequency boost: intel_pstate's `no_turbo`, or cpufreq's `boost`.
fn boost(root: &Path) -> String {
    if let Some(n) = read(root, "/sys/devices/system/cpu/intel_pstate/no_turbo") {
        return if n == "1" { "off" } else { "on" }.into();
    }
    match read(root, "/sys/devices/system/cpu/cpufreq/boost").as_deref() {
        Some("1") => "on".into(),
        Some("0") => "off".into(),
        _ => UNKNOWN.into(),
    }
}

/// The mitigations in force, by vulnerability; "none needed" where the
/// CPU is not affected.
fn mitigations(root: &Path) -> String {
    let dir = root.join("sys/devices/system/cpu/vulnerabilities");
    let mut v: Vec<(String, String)> = std::fs::read_dir(&dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let s = std::fs::read_to_string(e.path()).ok()?;
            Some((
                e.file_name().to_string_lossy().into_owned(),
                s.trim().to_string(),
            ))
        })
        .filter(|(_, s)| s != "Not affected")
        .collect();
    if v.is_empty() {
        return if dir.exists() {
            "none needed".into()
        } else {
            UNKNOWN.into()
        };
    }
    v.sort();
    v.iter()
        .map(|(k, s)| format!("{k}: {s}"))
        .collect::<Vec<_>>()
        .join("; ")
}

fn numa(root: &Path) -> String {
    let mut nodes: Vec<String> = std::fs::read_dir(root.join("sys/devices/system/node"))
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let n = e.file_name().to_string_lossy().into_owned();
            let id = n.strip_prefix("node")?;
            id.parse::<u32>().ok()?;
            let cpus = std::fs::read_to_string(e.path().join("cpulist")).unwrap_or_default();
            Some(format!("{n}: CPUs {}", cpus.trim()))
        })
        .collect();
    nodes.sort();
    match nodes.len() {
        0 => UNKNOWN.into(),
        1 => "1 node".into(),
        n => format!("{n} nodes ({})", nodes.join("; ")),
    }
}

/// Each disk's IO scheduler and write cache (loop, ram and zram devices
/// left out).
fn disks(root: &Path) -> String {
    let mut v: Vec<String> = std::fs::read_dir(root.join("sys/block"))
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let n = e.file_name().to_string_lossy().into_owned();
            if ["loop", "ram", "zram"].iter().any(|p| n.starts_with(p)) {
                return None;
            }
            let q = e.path().join("queue");
            let sched = std::fs::read_to_string(q.join("scheduler"))
                .map(|s| selected(s.trim()))
                .unwrap_or_else(|_| UNKNOWN.into());
            let cache = std::fs::read_to_string(q.join("write_cache"))
                .map(|s| s.trim().to_string())
                .unwrap_or_else(|_| UNKNOWN.into());
            Some(format!("{n}: scheduler {sched}, {cache}"))
        })
        .collect();
    v.sort();
    if v.is_empty() {
        UNKNOWN.into()
    } else {
        v.join("; ")
    }
}

/// Every fact, as the machine under `root` has it.
pub fn facts(root: &Path) -> Vec<Fact> {
    let or_unknown = |s: Option<String>| s.unwrap_or_else(|| UNKNOWN.into());
    let cpuinfo = read(root, "/proc/cpuinfo").unwrap_or_default();
    let microcode = cpuinfo
        .lines()
        .find_map(|l| {
            let (k, v) = l.split_once(':')?;
            (k.trim() == "microcode").then(|| v.trim().to_string())
        })
        .unwrap_or_else(|| UNKNOWN.into());
    let smt = match read(root, "/sys/devices/system/cpu/smt/active").as_deref() {
        Some("1") => "on".to_string(),
        Some("0") => match read(root, "/sys/devices/system/cpu/smt/control") {
            Some(c) if c == "on" => "off (no sibling threads)".into(),
            Some(c) => format!("off ({c})"),
            None => "off".into(),
        },
        _ => UNKNOWN.into(),
    };
    let mhz = per_cpu(root, "scaling_cur_freq");
    let mhz = match mhz.parse::<f64>() {
        Ok(khz) => format!("{:.0} MHz", khz / 1000.0),
        Err(_) => mhz,
    };
    let thp = |f: &str| {
        or_unknown(
            read(root, &format!("/sys/kernel/mm/transparent_hugepage/{f}")).map(|s| selected(&s)),
        )
    };
    let fact =
        |name, value: String, advice: Option<&'static str>, good: &dyn Fn(&str) -> bool| Fact {
            name,
            ok: advice.filter(|_| value != UNKNOWN).map(|_| good(&value)),
            value,
            advice,
        };
    vec![
        fact(
            "governor",
            per_cpu(root, "scaling_governor"),
            Some("performance"),
            &|v| v == "performance",
        ),
        fact("frequency", mhz, None, &|_| true),
        fact(
            "boost",
            boost(root),
            Some("off: a boost depends on temperature and the other cores' load"),
            &|v| v == "off",
        ),
        fact("smt", smt, None, &|_| true),
        fact(
            "thp",
            thp("enabled"),
            Some("madvise or never: databases fault huge pages in at random"),
            &|v| v != "always",
        ),
        fact(
            "thp_defrag",
            thp("defrag"),
            Some("not always: compaction stalls the faulting thread"),
            &|v| v != "always",
        ),
        fact(
            "swappiness",
            or_unknown(read(root, "/proc/sys/vm/swappiness")),
            Some("1 or less: a swapped-out buffer pool reads as IO"),
            &|v| v.parse::<u32>().is_ok_and(|n| n <= 1),
        ),
        fact("mitigations", mitigations(root), None, &|_| true),
        fact("microcode", microcode, None, &|_| true),
        fact("numa", numa(root), None, &|_| true),
        fact(
            "clocksource",
            or_unknown(read(
                root,
                "/sys/devices/system/clocksource/clocksource0/current_clocksource",
            )),
            Some("tsc: others cost a system call per clock read"),
            &|v| v == "tsc",
        ),
        fact("disks", disks(root), None, &|_| true),
    ]
}

/// The facts as a run records them (name → value).
pub fn recorded(root: &Path) -> BTreeMap<String, String> {
    facts(root)
        .into_iter()
        .map(|f| (f.name.to_string(), f.value))
        .collect()
}

/// The compared facts that differ between two hosts' records: (fact,
/// `a`'s value, `b`'s value), a fact one of them did not record left out.
pub fn differences(
    a: &BTreeMap<String, String>,
    b: &BTreeMap<String, String>,
) -> Vec<(String, String, String)> {
    COMPARED
        .iter()
        .filter_map(|k| {
            let (x, y) = (a.get(*k)?, b.get(*k)?);
            (x != y).then(|| (k.to_string(), x.clone(), y.clone()))
        })
        .collect()
}

/// A setting `tune` changes: its file(s) and the value it writes.
struct Setting {
    name: &'static str,
    files: Vec<PathBuf>,
    value: &'static str,
}

/// What `tune` sets, where the machine has it: the performance governor,
/// no boost, THP on madvise with no defragmenting on fault, swappiness 1.
fn settings(root: &Path) -> Vec<Setting> {
    let governors: Vec<PathBuf> = cpus(root)
        .into_iter()
        .map(|c| c.join("cpufreq/scaling_governor"))
        .filter(|p| p.exists())
        .collect();
    let mut s = vec![Setting {
        name: "governor",
        files: governors,
        value: "performance",
    }];
    for (name, file, value) in [
        ("boost", "sys/devices/system/cpu/intel_pstate/no_turbo", "1"),
        ("boost", "sys/devices/system/cpu/cpufreq/boost", "0"),
        (
            "thp",
            "sys/kernel/mm/transparent_hugepage/enabled",
            "madvise",
        ),
        (
            "thp_defrag",
            "sys/kernel/mm/transparent_hugepage/defrag",
            "madvise",
        ),
        ("swappiness", "proc/sys/vm/swappiness", "1"),
    ] {
        let p = root.join(file);
        if p.exists() {
            s.push(Setting {
                name,
                files: vec![p],
                value,
            });
        }
    }
    s.retain(|x| !x.files.is_empty());
    s
}

/// What `tune` found before it wrote: (file, its value), to put back.
pub type Saved = Vec<(PathBuf, String)>;

/// Sets each setting the machine has, returning what was there before
/// (already-tuned files included, so `reset` puts back exactly what was)
/// and the settings it could not set (`name: why`).
pub fn tune(root: &Path) -> (Saved, Vec<String>) {
    let (mut saved, mut failed) = (Vec::new(), Vec::new());
    for s in settings(root) {
        for f in &s.files {
            let Ok(before) = std::fs::read_to_string(f) else {
                continue;
            };
            let before = selected(before.trim());
            match std::fs::write(f, s.value) {
                Ok(()) => saved.push((f.clone(), before)),
                Err(e) => failed.push(format!("{}: {} ({e})", s.name, f.display())),
            }
        }
    }
    (saved, failed)
}

/// Whether `value` is one a setting's file takes: what `reset` may write
/// back there (a governor's name, 0 or 1, a THP mode, a swappiness).
fn takes(name: &str, value: &str) -> bool {
    let word = |v: &str| {
        !v.is_empty() && v.len() <= 32 && v.chars().all(|c| c.is_ascii_lowercase() || c == '_')
    };
    match name {
        "governor" => word(value),
        "boost" => value == "0" || value == "1",
        "thp" => ["always", "madvise", "never"].contains(&value),
        "thp_defrag" => ["always", "defer", "defer+madvise", "madvise", "never"].contains(&value),
        "swappiness" => value.parse::<u32>().is_ok_and(|n| n <= 200),
        _ => false,
    }
}

/// Refuses a saved state `reset` must not write: a file that is not one
/// `tune` sets on this machine (as `settings` names it, not a path that
/// merely starts like one: `sys/../../x`), or a value that file never
/// takes.
pub fn check_saved(root: &Path, saved: &Saved) -> Result<(), NotSaved> {
    let known = settings(root);
    for (f, v) in saved {
        let Some(s) = known.iter().find(|s| s.files.iter().any(|k| k == f)) else {
            return Err(NotSaved::File(f.clone()));
        };
        if !takes(s.name, v) {
            return Err(NotSaved::Value {
                file: f.clone(),
                value: crate::util::printable(v, 40),
                setting: s.name,
            });
        }
    }
    Ok(())
}

/// What makes a saved state one `tune` cannot have written.
#[derive(Debug, PartialEq, thiserror::Error)]
pub enum NotSaved {
    #[error("{} is not a file `relbench host tune` sets", .0.display())]
    File(PathBuf),
    #[error("{} = {value:?} is not a value {setting} takes", .file.display())]
    Value {
        file: PathBuf,
        value: String,
        setting: &'static str,
    },
}

/// Puts back what [`tune`] saved; the files it could not write.
pub fn reset(saved: &Saved) -> Vec<String> {
    saved
        .iter()
        .filter_map(|(f, v)| {
            std::fs::write(f, v)
                .err()
                .map(|e| format!("{}: {e}", f.display()))
        })
        .collect()
}

/// What `tune` would set here, for `relbench host` to say.
pub fn tunable(root: &Path) -> Vec<&'static str> {
    let mut v: Vec<&'static str> = settings(root).iter().map(|s| s.name).collect();
    v.dedup();
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::util::test_tree as tree;

    #[test]
    fn a_vm_without_cpufreq_says_unknown_and_what_it_has() {
        let d = tree(&[
            ("sys/devices/system/cpu/cpu0/online", "1"),
            ("sys/devices/system/cpu/smt/active", "0"),
            ("sys/devices/system/cpu/smt/control", "notsupported"),
            (
                "sys/devices/system/cpu/vulnerabilities/meltdown",
                "Not affected\n",
            ),
            (
                "sys/devices/system/cpu/vulnerabilities/spectre_v2",
                "Mitigation: Retpolines\n",
            ),
            (
                "sys/kernel/mm/transparent_hugepage/enabled",
                "always [madvise] never\n",
            ),
            ("proc/sys/vm/swappiness", "60\n"),
            ("proc/cpuinfo", "processor\t: 0\nmicrocode\t: 0x1000065\n"),
        ]);
        let f = recorded(d.path());
        assert_eq!(f["governor"], UNKNOWN);
        assert_eq!(f["boost"], UNKNOWN);
        assert_eq!(f["smt"], "off (notsupported)");
        assert_eq!(f["thp"], "madvise");
        assert_eq!(f["mitigations"], "spectre_v2: Mitigation: Retpolines");
        assert_eq!(f["microcode"], "0x1000065");
        let swap = facts(d.path())
            .into_iter()
            .find(|x| x.name == "swappiness")
            .unwrap();
        assert_eq!(swap.ok, Some(false));
        let gov = facts(d.path())
            .into_iter()
            .find(|x| x.name == "governor")
            .unwrap();
        assert_eq!(gov.ok, None);
    }

    #[test]
    fn tune_sets_what_the_machine_has_and_reset_puts_back_what_was_there() {
        let d = tree(&[
            (
                "sys/devices/system/cpu/cpu0/cpufreq/scaling_governor",
                "powersave\n",
            ),
            (
                "sys/devices/system/cpu/cpu1/cpufreq/scaling_governor",
                "powersave\n",
            ),
            ("sys/devices/system/cpu/intel_pstate/no_turbo", "0\n"),
            (
                "sys/kernel/mm/transparent_hugepage/enabled",
                "[always] madvise never\n",
            ),
            ("proc/sys/vm/swappiness", "60\n"),
        ]);
        let root = d.path();
        assert_eq!(tunable(root), ["governor", "boost", "thp", "swappiness"]);
        let (saved, failed) = tune(root);
        assert!(failed.is_empty(), "{failed:?}");
        let f = recorded(root);
        assert_eq!(
            (f["governor"].as_str(), f["boost"].as_str()),
            ("performance", "off")
        );
        assert_eq!(
            (f["thp"].as_str(), f["swappiness"].as_str()),
            ("madvise", "1")
        );
        assert!(reset(&saved).is_empty());
        let f = recorded(root);
        assert_eq!(
            (f["governor"].as_str(), f["boost"].as_str()),
            ("powersave", "on")
        );
        assert_eq!(
            (f["thp"].as_str(), f["swappiness"].as_str()),
            ("always", "60")
        );
    }

    /// Regression: `host reset` wrote what its saved file said.
    #[test]
    fn reset_takes_only_the_files_tune_sets_and_values_they_take() {
        let d = tree(&[
            (
                "sys/devices/system/cpu/cpu0/cpufreq/scaling_governor",
                "powersave\n",
            ),
            ("proc/sys/vm/swappiness", "60\n"),
            ("sys/power/state", "mem\n"),
        ]);
        let root = d.path();
        let gov = root.join("sys/devices/system/cpu/cpu0/cpufreq/scaling_governor");
        let ok: Saved = vec![
            (gov.clone(), "powersave".into()),
            (root.join("proc/sys/vm/swappiness"), "60".into()),
        ];
        assert_eq!(check_saved(root, &ok), Ok(()));
        for bad in [
            vec![(root.join("sys/../x"), "1".to_string())],
            vec![(root.join("sys/power/state"), "disk".to_string())],
            vec![(gov.clone(), "x".repeat(40))],
            vec![(gov, "power save".to_string())],
            vec![(root.join("proc/sys/vm/swappiness"), "1000".to_string())],
        ] {
            assert!(check_saved(root, &bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn hosts_differ_by_the_facts_that_move_figures() {
        let a: BTreeMap<String, String> = [
            ("governor", "performance"),
            ("swappiness", "1"),
            ("thp", "never"),
        ]
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .into();
        let mut b = a.clone();
        b.insert("governor".into(), "powersave".into());
        b.insert("swappiness".into(), "60".into());
        b.remove("thp");
        assert_eq!(
            differences(&a, &b),
            [(
                "governor".to_string(),
                "performance".to_string(),
                "powersave".to_string()
            )]
        );
    }
}
