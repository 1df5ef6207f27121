//! The CPU limit relbench runs under, when it runs under one: the control
//! groups of its own process that cap its CPU (a container's `limits.cpu`,
//! a systemd `CPUQuota=`), and how long the kernel held their threads back
//! for it. A window in which the limit throttled the benchmark measured
//! the limit, not the server; the machine's counters do not show it (its
//! CPUs were free), so it is read here and judged as interference.
//!
//! Both hierarchies: cgroup v2 (`0::/path`, `cpu.max`, `cpu.stat`'s
//! `throttled_usec`) and v1's `cpu` controller (`cpu.cfs_quota_us`,
//! `cpu.stat`'s `throttled_time` in ns).

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// A limited group's `cpu.stat`, and how its throttled time is counted.
#[derive(Debug, Clone)]
struct Limited {
    stat: PathBuf,
    /// The field and its unit in seconds.
    field: &'static str,
    per_sec: f64,
}

/// The groups from `own` (the process's group, as `/proc/self/cgroup`
/// names it) up to the hierarchy's root under `mount`, that have a CPU
/// limit set.
fn limited_under(mount: &Path, own: &str, v2: bool) -> Vec<Limited> {
    let mut out = Vec::new();
    let mut dir = mount.join(own.trim_start_matches('/'));
    loop {
        let limited = if v2 {
            std::fs::read_to_string(dir.join("cpu.max"))
                .is_ok_and(|t| t.split_whitespace().next().is_some_and(|q| q != "max"))
        } else {
            std::fs::read_to_string(dir.join("cpu.cfs_quota_us"))
                .is_ok_and(|t| t.trim().parse::<i64>().is_ok_and(|q| q > 0))
        };
        if limited {
            out.push(Limited {
                stat: dir.join("cpu.stat"),
                field: if v2 {
                    "throttled_usec"
                } else {
                    "throttled_time"
                },
                per_sec: if v2 { 1e6 } else { 1e9 },
            });
        }
        if dir == mount || !dir.pop() || !dir.starts_with(mount) {
            break;
        }
    }
    out
}

/// The limited groups of `cgroup_file` (`/proc/self/cgroup`'s text), with
/// the hierarchies mounted under `root` (`/sys/fs/cgroup`).
fn limited_groups(cgroup_file: &str, root: &Path) -> Vec<Limited> {
    let mut out = Vec::new();
    for line in cgroup_file.lines() {
        let mut parts = line.splitn(3, ':');
        let (Some(id), Some(controllers), Some(path)) = (parts.next(), parts.next(), parts.next())
        else {
            continue;
        };
        if id == "0" && controllers.is_empty() {
            // v2's unified tree: at the root on a pure v2 host, under
            // `unified` on a hybrid one (where v1's `cpu` holds the limits).
            if root.join("cgroup.controllers").exists() {
                out.extend(limited_under(root, path, true));
            }
        } else if controllers.split(',').any(|c| c == "cpu") {
            for name in ["cpu", "cpu,cpuacct", "cpuacct,cpu"] {
                let mount = root.join(name);
                if mount.join("cpu.cfs_quota_us").exists() {
                    out.extend(limited_under(&mount, path, false));
                    break;
                }
            }
        }
    }
    out
}

fn groups() -> &'static [Limited] {
    static GROUPS: OnceLock<Vec<Limited>> = OnceLock::new();
    GROUPS.get_or_init(|| {
        std::fs::read_to_string("/proc/self/cgroup")
            .map(|t| limited_groups(&t, Path::new("/sys/fs/cgroup")))
            .unwrap_or_default()
    })
}

/// How long the CPU limits over relbench (and the server it started, in
/// the same group) have throttled their threads since they were set, in
/// seconds: the most any one limited group says. `None` when no limit
/// is set — nothing to read, and nothing read in the sampler's loop.
pub fn throttled_secs() -> Option<f64> {
    let groups = groups();
    if groups.is_empty() {
        return None;
    }
    groups
        .iter()
        .filter_map(|g| {
            let text = std::fs::read_to_string(&g.stat).ok()?;
            let v: f64 = text
                .lines()
                .find_map(|l| l.strip_prefix(g.field)?.trim().parse().ok())?;
            Some(v / g.per_sec)
        })
        .reduce(f64::max)
}

/// Whether relbench runs in a container (Kubernetes, Docker, Podman):
/// there `/proc/stat` counts the whole node but only the container's own
/// processes can be seen, so CPU used by other pods cannot be named.
pub fn in_container() -> bool {
    static IN: OnceLock<bool> = OnceLock::new();
    *IN.get_or_init(|| {
        std::env::var_os("KUBERNETES_SERVICE_HOST").is_some()
            || Path::new("/.dockerenv").exists()
            || Path::new("/run/.containerenv").exists()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::util::test_tree as tree;

    #[test]
    fn a_v1_quota_on_the_process_group_or_a_parent_is_found_and_v2s_too() {
        let v1 = tree(&[
            ("cpu/cpu.cfs_quota_us", "-1\n"),
            ("cpu/pod/cpu.cfs_quota_us", "800000\n"),
            (
                "cpu/pod/cpu.stat",
                "nr_throttled 3\nthrottled_time 2500000000\n",
            ),
            ("cpu/pod/c1/cpu.cfs_quota_us", "-1\n"),
        ]);
        let g = limited_groups("4:memory:/x\n1:cpu:/pod/c1\n0::/\n", v1.path());
        assert_eq!(g.len(), 1, "{g:?}");
        assert!(g[0].stat.ends_with("cpu/pod/cpu.stat"));
        let v2 = tree(&[
            ("cgroup.controllers", "cpu io memory\n"),
            ("kubepods/cpu.max", "max 100000\n"),
            ("kubepods/pod/cpu.max", "200000 100000\n"),
            ("kubepods/pod/cpu.stat", "usage_usec 1\nthrottled_usec 42\n"),
        ]);
        let g = limited_groups("0::/kubepods/pod\n", v2.path());
        assert_eq!(g.len(), 1, "{g:?}");
        assert_eq!(g[0].field, "throttled_usec");
        assert!(limited_groups("0::/\n", tree(&[]).path()).is_empty());
    }
}
