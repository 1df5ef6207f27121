//! How much space a database takes: the apparent size (the files' lengths,
//! what `ls -l` and `du --apparent-size` say) and the allocated size (the
//! blocks the filesystem holds for them, what `du` says). Hole-punching
//! page compression (MariaDB's `PAGE_COMPRESSED`, MySQL's
//! `COMPRESSION='zlib'`) saves only the second: a study of it that
//! measured file lengths would find no saving. Each is split into the
//! logs (redo, WAL, binary logs) and the rest.

use std::fs;
use std::os::unix::fs::MetadataExt;
use std::path::Path;

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DbSize {
    /// Bytes by length, all files.
    pub apparent: u64,
    /// Bytes the filesystem allocated, all files.
    pub allocated: u64,
    /// Of `apparent`, the logs.
    pub logs_apparent: u64,
    /// Of `allocated`, the logs.
    pub logs_allocated: u64,
}

impl DbSize {
    /// The tables and indexes (and whatever else is not a log), by length.
    pub fn data_apparent(&self) -> u64 {
        self.apparent - self.logs_apparent
    }

    pub fn data_allocated(&self) -> u64 {
        self.allocated - self.logs_allocated
    }

    /// Adds one file.
    pub fn add(&mut self, m: &fs::Metadata, log: bool) {
        // st_blocks counts 512-byte units whatever the filesystem's block.
        let allocated = m.blocks() * 512;
        self.apparent += m.len();
        self.allocated += allocated;
        if log {
            self.logs_apparent += m.len();
            self.logs_allocated += allocated;
        }
    }
}

/// The size of every file under `dir`; `is_log` is asked of each path
/// relative to `dir`. `None` when `dir` cannot be read.
pub fn of_dir(dir: &Path, is_log: &dyn Fn(&Path) -> bool) -> Option<DbSize> {
    fn walk(root: &Path, p: &Path, is_log: &dyn Fn(&Path) -> bool, size: &mut DbSize) {
        match fs::symlink_metadata(p) {
            Ok(m) if m.is_dir() => {
                if let Ok(d) = fs::read_dir(p) {
                    for e in d.flatten() {
                        walk(root, &e.path(), is_log, size);
                    }
                }
            }
            Ok(m) if m.is_file() => size.add(&m, is_log(p.strip_prefix(root).unwrap_or(p))),
            _ => {}
        }
    }
    fs::metadata(dir).ok()?;
    let mut size = DbSize::default();
    walk(dir, dir, is_log, &mut size);
    Some(size)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Seek, SeekFrom, Write};

    /// A sparse file (what hole punching leaves) is long but holds few
    /// blocks: the allocated size must see that.
    #[test]
    fn a_sparse_file_is_long_but_small_on_disk() {
        let dir = std::env::temp_dir().join(format!("relbench-size-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(dir.join("pg_wal")).unwrap();
        let mut f = fs::File::create(dir.join("table.ibd")).unwrap();
        f.write_all(&[1u8; 4096]).unwrap();
        f.seek(SeekFrom::Start(64 << 20)).unwrap();
        f.write_all(&[1u8; 4096]).unwrap();
        fs::write(dir.join("pg_wal").join("000001"), vec![7u8; 8192]).unwrap();
        let s = of_dir(&dir, &|p| p.starts_with("pg_wal")).unwrap();
        assert_eq!(s.apparent, (64 << 20) + 4096 + 8192);
        assert!(s.allocated < 1 << 20, "{s:?}");
        assert_eq!(s.logs_apparent, 8192);
        assert_eq!(s.data_apparent(), (64 << 20) + 4096);
        fs::remove_dir_all(&dir).unwrap();
    }
}
