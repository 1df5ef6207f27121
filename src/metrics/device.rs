//! Which block devices carry a datadir's IO: the device of its filesystem,
//! resolved through partitions (to the disk), device-mapper and md (to the
//! devices under them, via `/sys/class/block/NAME/slaves`). The sampler
//! then reads exactly those devices from `/proc/diskstats`, the figures
//! `iostat -x` prints for them.

use std::collections::BTreeSet;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::measure::Unmeasured;

/// The devices the sampler reads for one target.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Devices {
    /// Whole devices whose `/proc/diskstats` lines are summed.
    pub devices: Vec<String>,
    /// The block device the filesystem sits on (a partition, a dm or md
    /// device) and how it was resolved, in words.
    pub resolved: String,
}

/// Splits a `dev_t` as glibc's `major()`/`minor()` do.
fn major_minor(dev: u64) -> (u64, u64) {
    let major = ((dev >> 8) & 0xfff) | ((dev >> 32) & !0xfff);
    let minor = (dev & 0xff) | ((dev >> 12) & !0xff);
    (major, minor)
}

/// Resolves `path` with the real `/sys`, `/proc` and `/dev`.
pub fn devices_of(path: &Path) -> Result<Devices, Unmeasured> {
    let meta = std::fs::metadata(path)
        .map_err(|e| Unmeasured::new(format!("cannot stat {}: {e}", path.display())))?;
    let (mut major, mut minor) = major_minor(meta.dev());
    let mut via = String::new();
    if major == 0 {
        // btrfs, overlayfs, tmpfs, NFS: the filesystem has an anonymous
        // device number. When its mount names a /dev node, that is the device.
        let (source, fstype) = mount_source(path)
            .ok_or_else(|| Unmeasured::new(format!("no mount found for {}", path.display())))?;
        let rdev = source
            .starts_with("/dev/")
            .then(|| std::fs::metadata(&source).ok())
            .flatten()
            .map(|m| m.rdev())
            .filter(|&r| r != 0);
        let Some(rdev) = rdev else {
            return Err(Unmeasured::new(format!(
                "{} is on {fstype} ({source}), which has no block device",
                path.display()
            )));
        };
        (major, minor) = major_minor(rdev);
        via = format!(" ({fstype} mounted from {source})");
    }
    let mut d = resolve(Path::new("/sys"), major, minor)?;
    d.resolved += &via;
    let stats = std::fs::read_to_string("/proc/diskstats").unwrap_or_default();
    for dev in &d.devices {
        if !stats
            .lines()
            .any(|l| l.split_ascii_whitespace().nth(2) == Some(dev))
        {
            return Err(Unmeasured::new(format!(
                "device {dev} has no line in /proc/diskstats"
            )));
        }
    }
    Ok(d)
}

/// The mount source and filesystem type of the longest mount point that
/// holds `path`, from `/proc/self/mountinfo`.
fn mount_source(path: &Path) -> Option<(String, String)> {
    let path = path.canonicalize().ok()?;
    let info = std::fs::read_to_string("/proc/self/mountinfo").ok()?;
    info.lines()
        .filter_map(|l| {
            let (left, right) = l.split_once(" - ")?;
            let mount_point = left.split_whitespace().nth(4)?.replace("\\040", " ");
            let mut r = right.split_whitespace();
            let (fstype, source) = (r.next()?, r.next()?);
            path.starts_with(&mount_point)
                .then(|| (mount_point.len(), source.to_string(), fstype.to_string()))
        })
        .max_by_key(|m| m.0)
        .map(|(_, s, f)| (s, f))
}

/// Resolves device `major:minor` under the sysfs tree at `sys` to the
/// whole devices that carry its IO.
pub fn resolve(sys: &Path, major: u64, minor: u64) -> Result<Devices, Unmeasured> {
    let link = sys.join(format!("dev/block/{major}:{minor}"));
    let dir = link.canonicalize().map_err(|_| {
        Unmeasured::new(format!(
            "block device {major}:{minor} is not in {}",
            link.display()
        ))
    })?;
    let name = file_name(&dir);
    let mut leaves = BTreeSet::new();
    leaves_of(sys, &dir, &mut leaves, 0);
    let devices: Vec<String> = leaves.into_iter().collect();
    let resolved = if devices.len() == 1 && devices[0] == name {
        name
    } else {
        format!("{name} → {}", devices.join(" + "))
    };
    Ok(Devices { devices, resolved })
}

fn file_name(p: &Path) -> String {
    p.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// A partition resolves to its disk (the sysfs parent directory); a dm or
/// md device to the devices in its `slaves` folder, recursively; anything
/// else is a leaf.
fn leaves_of(sys: &Path, dir: &Path, out: &mut BTreeSet<String>, depth: u32) {
    if depth > 8 {
        return; // a cycle would be a broken sysfs; stop rather than loop
    }
    if dir.join("partition").exists() {
        if let Some(parent) = dir.parent() {
            return leaves_of(sys, parent, out, depth + 1);
        }
    }
    let slaves: Vec<PathBuf> = std::fs::read_dir(dir.join("slaves"))
        .map(|rd| rd.flatten().map(|e| e.path()).collect())
        .unwrap_or_default();
    if slaves.is_empty() {
        out.insert(file_name(dir));
        return;
    }
    for s in slaves {
        let target = s
            .canonicalize()
            .unwrap_or_else(|_| sys.join("class/block").join(file_name(&s)));
        leaves_of(sys, &target, out, depth + 1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    /// A sysfs with a disk `sda` (partitions sda1, sda2), an LVM volume
    /// dm-0 on sda2, and a RAID1 md0 over sdb and sdc.
    fn fake_sys() -> tempfile::TempDir {
        let t = tempfile::tempdir().unwrap();
        let s = t.path();
        let devs = s.join("devices/pci/block");
        let mk = |p: &Path| std::fs::create_dir_all(p).unwrap();
        for (name, parent) in [
            ("sda", None),
            ("sda1", Some("sda")),
            ("sda2", Some("sda")),
            ("sdb", None),
            ("sdc", None),
        ] {
            let dir = match parent {
                Some(p) => devs.join(p).join(name),
                None => devs.join(name),
            };
            mk(&dir);
            mk(&dir.join("slaves"));
            if parent.is_some() {
                std::fs::write(dir.join("partition"), "1").unwrap();
            }
        }
        let virt = s.join("devices/virtual/block");
        for (name, slaves) in [
            ("dm-0", vec![devs.join("sda/sda2")]),
            ("md0", vec![devs.join("sdb"), devs.join("sdc")]),
        ] {
            mk(&virt.join(name).join("slaves"));
            for sl in slaves {
                symlink(&sl, virt.join(name).join("slaves").join(file_name(&sl))).unwrap();
            }
        }
        mk(&s.join("dev/block"));
        for (mm, target) in [
            ("8:0", devs.join("sda")),
            ("8:1", devs.join("sda/sda1")),
            ("8:2", devs.join("sda/sda2")),
            ("253:0", virt.join("dm-0")),
            ("9:0", virt.join("md0")),
        ] {
            symlink(&target, s.join("dev/block").join(mm)).unwrap();
        }
        t
    }

    #[test]
    fn partitions_resolve_to_their_disk() {
        let t = fake_sys();
        let d = resolve(t.path(), 8, 1).unwrap();
        assert_eq!(d.devices, vec!["sda"]);
        assert_eq!(d.resolved, "sda1 → sda");
        assert_eq!(resolve(t.path(), 8, 0).unwrap().resolved, "sda");
    }

    #[test]
    fn device_mapper_and_md_resolve_to_the_devices_under_them() {
        let t = fake_sys();
        assert_eq!(resolve(t.path(), 253, 0).unwrap().devices, vec!["sda"]);
        let md = resolve(t.path(), 9, 0).unwrap();
        assert_eq!(md.devices, vec!["sdb", "sdc"]);
        assert_eq!(md.resolved, "md0 → sdb + sdc");
    }

    #[test]
    fn unknown_devices_say_so() {
        let t = fake_sys();
        assert!(resolve(t.path(), 7, 7)
            .unwrap_err()
            .to_string()
            .contains("7:7"));
    }

    #[test]
    fn dev_numbers_split_like_glibc() {
        assert_eq!(major_minor(0xfe00), (254, 0));
        assert_eq!(major_minor(0x801), (8, 1));
        assert_eq!(major_minor((259 << 8) | 3), (259, 3));
    }

    #[test]
    fn this_machines_tmp_resolves_or_says_why() {
        match devices_of(&std::env::temp_dir()) {
            Ok(d) => assert!(!d.devices.is_empty()),
            Err(e) => {
                let e = e.to_string();
                assert!(e.contains("block device") || e.contains("diskstats"), "{e}")
            }
        }
    }
}
