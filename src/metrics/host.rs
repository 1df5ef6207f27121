//! Facts about the machine a run happened on, recorded in `run.json` so a
//! report can say where its figures come from and put hosts side by side.

use std::path::Path;

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct HostFacts {
    pub hostname: String,
    pub cpu_model: String,
    pub cores: usize,
    pub memory_bytes: u64,
    pub kernel: String,
    pub os: String,
    /// The settings that bend a benchmark (`metrics::tuning`): governor,
    /// boost, SMT, huge pages, mitigations, microcode, … by name.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub tuning: std::collections::BTreeMap<String, String>,
}

impl HostFacts {
    /// How this host differs from `base` in the facts that move a
    /// benchmark's figures (CPU, memory, kernel, then the compared tuning:
    /// governor, boost, SMT, huge pages, mitigations, microcode), each as
    /// "governor powersave against performance"; the hostname is not one
    /// (two names of one machine measure alike).
    pub fn differences(&self, base: &HostFacts) -> Vec<String> {
        let facts = |h: &HostFacts| {
            [
                ("CPU", format!("{} ({} cores)", h.cpu_model, h.cores)),
                ("memory", format!("{} MiB", h.memory_bytes >> 20)),
                ("kernel", h.kernel.clone()),
            ]
        };
        let mut d: Vec<String> = facts(self)
            .into_iter()
            .zip(facts(base))
            .filter(|((_, a), (_, b))| a != b)
            .map(|((k, a), (_, b))| format!("{k} {a} against {b}"))
            .collect();
        d.extend(
            super::tuning::differences(&self.tuning, &base.tuning)
                .into_iter()
                .map(|(k, x, y)| format!("{k} {x} against {y}")),
        );
        d
    }

    /// Whether windows measured here and on `other` are one machine's:
    /// the same name and no difference in the facts compared.
    pub fn same_machine(&self, other: &HostFacts) -> bool {
        self.hostname == other.hostname && self.differences(other).is_empty()
    }
}

/// The filesystem that holds a path.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct Filesystem {
    pub mount_point: String,
    pub device: String,
    pub fstype: String,
}

fn read(path: &str) -> String {
    std::fs::read_to_string(path)
        .map(|s| s.trim().to_string())
        .unwrap_or_default()
}

pub fn facts() -> HostFacts {
    let cpuinfo = read("/proc/cpuinfo");
    let cpu_model = cpuinfo
        .lines()
        .find_map(|l| {
            let (k, v) = l.split_once(':')?;
            matches!(k.trim(), "model name" | "Model" | "cpu model").then(|| v.trim().to_string())
        })
        .unwrap_or_else(|| "unknown".into());
    let memory_bytes = read("/proc/meminfo")
        .lines()
        .find_map(|l| {
            let kb = l.strip_prefix("MemTotal:")?.trim().strip_suffix("kB")?;
            kb.trim().parse::<u64>().ok()
        })
        .map_or(0, |kb| kb * 1024);
    let os = read("/etc/os-release")
        .lines()
        .find_map(|l| l.strip_prefix("PRETTY_NAME="))
        .map(|v| v.trim_matches('"').to_string())
        .unwrap_or_default();
    HostFacts {
        hostname: read("/proc/sys/kernel/hostname"),
        cpu_model,
        cores: std::thread::available_parallelism().map_or(1, |n| n.get()),
        memory_bytes,
        kernel: read("/proc/sys/kernel/osrelease"),
        os,
        tuning: super::tuning::recorded(Path::new("/")),
    }
}

/// The mount that holds `path`: the longest mount point that is a prefix of
/// its canonical form.
pub fn filesystem_of(path: &Path) -> Option<Filesystem> {
    let path = path.canonicalize().ok()?;
    let mounts = std::fs::read_to_string("/proc/self/mounts").ok()?;
    mounts
        .lines()
        .filter_map(|l| {
            let mut f = l.split_whitespace();
            let (device, mount_point, fstype) = (f.next()?, f.next()?, f.next()?);
            // /proc/mounts escapes spaces in paths as \040.
            let mount_point = mount_point.replace("\\040", " ");
            path.starts_with(&mount_point).then(|| Filesystem {
                mount_point,
                device: device.to_string(),
                fstype: fstype.to_string(),
            })
        })
        .max_by_key(|f| f.mount_point.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn host_facts_are_read() {
        let h = facts();
        assert!(h.cores >= 1);
        assert!(h.memory_bytes > 0);
        assert!(!h.kernel.is_empty());
    }

    #[test]
    fn the_root_filesystem_holds_tmp_or_a_longer_mount_does() {
        let fs = filesystem_of(Path::new("/tmp")).unwrap();
        assert!(Path::new("/tmp").starts_with(&fs.mount_point));
        assert!(!fs.fstype.is_empty());
    }
}
