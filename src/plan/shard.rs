//! A schedule cut into shards: which targets run on which of N hosts, so
//! that a scheduler users already have (a Slurm array, a Kubernetes
//! Indexed Job) can run a study in parts, each part a whole run.
//!
//! The unit of work is a cell: one target's sequence in one repeat, on its
//! own data. A target's cells stay together on one shard (its repeats
//! interleave there with the base's, so its rank test compares repeats
//! measured on one host against the base measured on that same host),
//! assigned by a stable hash of the target's name: adding a target moves
//! only that target's cells, as nextest's `--partition hash:` does for
//! tests. The bases of the plan's comparisons (the first target when it
//! names none) and their A/A copies run on every shard, so every ratio is
//! computed between two targets measured on the same host, and the bases
//! measured on several hosts say how far hosts lie apart.

use std::fmt;

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::schedule::Schedule;

/// One part of N, numbered from 1.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Shard {
    pub index: u32,
    pub count: u32,
}

impl fmt::Display for Shard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

impl Shard {
    /// `I/N`, 1 ≤ I ≤ N.
    pub fn parse(text: &str) -> Result<Shard, String> {
        let bad = || {
            format!("--shard {text}: write I/N (this process runs part I of N, 1 ≤ I ≤ N, e.g. 2/5), or `env` to read it from Slurm's or Kubernetes's environment")
        };
        let (index, count) = super::share::part_of(text).ok_or_else(bad)?;
        Ok(Shard { index, count })
    }

    /// The shard a scheduler's environment names, out of the study's
    /// count in `RELBENCH_SHARD_COUNT`: a Slurm array task's number
    /// (`SLURM_ARRAY_TASK_ID`, the study's array numbered 1..N), or a
    /// Kubernetes Indexed Job's pod (`JOB_COMPLETION_INDEX` from 0).
    ///
    /// The count is the study's, never the submitted array's: `sbatch
    /// --array=2` to run a failed task again is an array of one task
    /// numbered 2, and read from its shape it would be shard 1/1 — the
    /// whole study, run silently (regression). So the task's number is its
    /// shard's, and an array numbered from 0 is refused rather than
    /// guessed at (a re-submitted task 2 of `--array=0-2` and of
    /// `--array=1-3` look alike).
    pub fn from_env(var: impl Fn(&str) -> Option<String>) -> Result<Shard, String> {
        let num = |name: &str| -> Result<Option<u32>, String> {
            match var(name) {
                None => Ok(None),
                Some(v) => v
                    .trim()
                    .parse()
                    .map(Some)
                    .map_err(|_| format!("--shard env: {name}={v} is not a number")),
            }
        };
        let count = num("RELBENCH_SHARD_COUNT")?.filter(|&c| c > 0);
        if let Some(id) = num("SLURM_ARRAY_TASK_ID")? {
            let count = count.ok_or(
                "--shard env: in a Slurm array task relbench needs the study's shard count in                  RELBENCH_SHARD_COUNT (the array's own size changes when a task is submitted again:                  `sbatch --array=2` is an array of one task); export RELBENCH_SHARD_COUNT=N in the                  batch script, as examples/slurm/study.sbatch does, or give the shard as --shard I/N",
            )?;
            if id == 0 || id > count {
                return Err(format!(
                    "--shard env: Slurm's array task {id} is not a shard of {count} (RELBENCH_SHARD_COUNT):                      number the study's array from 1, --array=1-{count}, so that a task's number is its                      shard's, or give the shard as --shard I/N"
                ));
            }
            if let Some(max) = num("SLURM_ARRAY_TASK_MAX")?.filter(|&m| m > count) {
                return Err(format!(
                    "--shard env: the array was submitted up to task {max}, but RELBENCH_SHARD_COUNT says                      the study has {count} shards; submit --array=1-{count}, or set RELBENCH_SHARD_COUNT to                      the study's count"
                ));
            }
            return Ok(Shard { index: id, count });
        }
        if let Some(i) = num("JOB_COMPLETION_INDEX")? {
            let count = count.ok_or(
                "--shard env: JOB_COMPLETION_INDEX is set but RELBENCH_SHARD_COUNT is not; \
                 set it in the Job's env to its `completions`",
            )?;
            return if i < count {
                Ok(Shard {
                    index: i + 1,
                    count,
                })
            } else {
                Err(format!(
                    "--shard env: JOB_COMPLETION_INDEX {i} is not below RELBENCH_SHARD_COUNT {count}; \
                     set RELBENCH_SHARD_COUNT to the Job's `completions`"
                ))
            };
        }
        Err("--shard env: neither Slurm's SLURM_ARRAY_TASK_ID nor Kubernetes's JOB_COMPLETION_INDEX \
             is set; run it as an array task or an Indexed Job's pod, or give the shard as --shard I/N"
            .into())
    }
}

/// A plan's identity across hosts: the SHA-256 of its text, as hex.
/// Shards of one study carry the same; a merge refuses others.
pub fn plan_hash(text: &str) -> String {
    crate::util::short_hash(text)
}

/// The seed a sharded run of a plan without one uses: drawn from the
/// plan's text, so every shard draws the same ids.
pub fn seed_of(text: &str) -> u64 {
    stable_u64(&format!("relbench seed\0{text}"))
}

fn stable_u64(key: &str) -> u64 {
    let d = Sha256::digest(key.as_bytes());
    u64::from_be_bytes(d[..8].try_into().expect("8 bytes"))
}

/// Where a target runs when the schedule is cut into shards.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Place {
    /// A base (or its A/A copy): on every shard.
    Every,
    /// On this shard only.
    One(u32),
}

/// What one shard runs, for `relbench check --shards N`.
#[derive(Debug, Clone)]
pub struct ShardLoad {
    pub shard: Shard,
    /// Target indices, in plan order: the bases, then its own.
    pub targets: Vec<usize>,
    /// Its timed part, in seconds (as [`Schedule::estimated_secs`]).
    pub secs: f64,
}

impl Schedule {
    /// Targets every shard runs: the bases, and the A/A copies of them.
    pub fn everywhere(&self, target: usize) -> bool {
        let t = &self.targets[target];
        let base = |name: &str| self.bases.iter().any(|&b| self.targets[b].name == name);
        self.bases.contains(&target) || t.copy_of.as_deref().is_some_and(base)
    }

    /// The shard a target's cells run on, out of `count`.
    pub fn place(&self, target: usize, count: u32) -> Place {
        if self.everywhere(target) {
            return Place::Every;
        }
        // A copy goes with its original: an A/A pair measures one host.
        let t = &self.targets[target];
        let key = t.copy_of.as_deref().unwrap_or(&t.name);
        Place::One((stable_u64(&format!("relbench cell\0{key}")) % u64::from(count)) as u32 + 1)
    }

    /// Whether `shard` runs `target`.
    pub fn runs(&self, shard: Shard, target: usize) -> bool {
        match self.place(target, shard.count) {
            Place::Every => true,
            Place::One(i) => i == shard.index,
        }
    }

    /// The part of the schedule one shard runs: its targets' executions,
    /// in the same order and with the same identities and seeds.
    pub fn shard(&self, shard: Shard) -> Schedule {
        let mut s = self.clone();
        s.executions.retain(|e| self.runs(shard, e.target));
        s.estimated_secs = s.executions.iter().map(|e| e.timed_secs()).sum();
        s
    }

    /// Every shard's targets and time, out of `count`.
    pub fn assignment(&self, count: u32) -> Vec<ShardLoad> {
        (1..=count)
            .map(|index| {
                let shard = Shard { index, count };
                let part = self.shard(shard);
                ShardLoad {
                    shard,
                    targets: (0..self.targets.len())
                        .filter(|&t| self.runs(shard, t))
                        .collect(),
                    secs: part.estimated_secs,
                }
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_shard_is_i_of_n_from_one() {
        assert_eq!(Shard::parse("2/3"), Ok(Shard { index: 2, count: 3 }));
        for bad in ["0/3", "4/3", "3", "a/b", "1/0", ""] {
            assert!(Shard::parse(bad).is_err(), "{bad}");
        }
    }

    fn env<'a>(pairs: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
        move |k| {
            pairs
                .iter()
                .find(|(n, _)| *n == k)
                .map(|(_, v)| v.to_string())
        }
    }

    #[test]
    fn a_slurm_task_is_its_numbers_shard_of_the_studys_count_even_submitted_again() {
        let s = |pairs: &[(&str, &str)]| Shard::from_env(env(pairs)).map(|s| s.to_string());
        let first = [
            ("SLURM_ARRAY_TASK_ID", "3"),
            ("SLURM_ARRAY_TASK_COUNT", "3"),
            ("SLURM_ARRAY_TASK_MIN", "1"),
            ("SLURM_ARRAY_TASK_MAX", "3"),
            ("RELBENCH_SHARD_COUNT", "3"),
        ];
        assert_eq!(s(&first).unwrap(), "3/3");
        // `sbatch --array=2`: an array of one task, numbered 2.
        let again = [
            ("SLURM_ARRAY_TASK_ID", "2"),
            ("SLURM_ARRAY_TASK_COUNT", "1"),
            ("SLURM_ARRAY_TASK_MIN", "2"),
            ("SLURM_ARRAY_TASK_MAX", "2"),
            ("RELBENCH_SHARD_COUNT", "3"),
        ];
        assert_eq!(s(&again).unwrap(), "2/3");
        // Without the study's count: refused, not read from the array.
        assert!(s(&again[..4]).unwrap_err().contains("RELBENCH_SHARD_COUNT"));
        let from_zero = [("SLURM_ARRAY_TASK_ID", "0"), ("RELBENCH_SHARD_COUNT", "3")];
        assert!(s(&from_zero).unwrap_err().contains("--array=1-3"));
        let too_big = [
            ("SLURM_ARRAY_TASK_ID", "1"),
            ("SLURM_ARRAY_TASK_MAX", "4"),
            ("RELBENCH_SHARD_COUNT", "3"),
        ];
        assert!(s(&too_big).unwrap_err().contains("up to task 4"));
        let k8s = [("JOB_COMPLETION_INDEX", "0"), ("RELBENCH_SHARD_COUNT", "4")];
        assert_eq!(s(&k8s).unwrap(), "1/4");
        assert!(s(&[("JOB_COMPLETION_INDEX", "0")])
            .unwrap_err()
            .contains("RELBENCH_SHARD_COUNT"));
        assert!(s(&[]).unwrap_err().contains("--shard I/N"));
    }

    fn schedule(text: &str) -> Schedule {
        let plan = crate::plan::parse(text, "plan.toml", std::path::Path::new("/tmp")).unwrap();
        plan.schedule(&plan.catalogue().unwrap())
    }

    const COPIES: &str = r#"
steps = ["point-query"]
[[target]]
name = "base"
engine = "sqlite"
copies = 2
[[target]]
name = "a"
engine = "sqlite"
copies = 3
[[target]]
name = "b"
engine = "sqlite"
[[target]]
name = "c"
engine = "sqlite"
[[comparison]]
base = "b"
"#;

    /// An A/A pair measures one host: a copy goes with its original; the
    /// comparisons' bases are on every shard.
    #[test]
    fn copies_go_with_their_original_and_every_comparisons_base_everywhere() {
        let s = schedule(COPIES);
        let names: Vec<&str> = s.targets.iter().map(|t| t.name.as_str()).collect();
        let at = |n: &str| names.iter().position(|x| *x == n).unwrap();
        for count in 1..=7 {
            for (copy, of) in s
                .targets
                .iter()
                .enumerate()
                .filter_map(|(i, t)| t.copy_of.as_deref().map(|o| (i, at(o))))
            {
                assert_eq!(s.place(copy, count), s.place(of, count), "{}", names[copy]);
            }
            assert_eq!(s.place(at("b"), count), Place::Every);
            // The first target is the base only when no comparison names one.
            for t in ["base", "a", "c"] {
                assert!(matches!(s.place(at(t), count), Place::One(i) if (1..=count).contains(&i)));
            }
        }
        // Every execution of the plan is on some shard; the bases' on all.
        let all = s.executions.len();
        let per: usize = (1..=4)
            .map(|i| s.shard(Shard { index: i, count: 4 }).executions.len())
            .sum();
        let everywhere = s
            .executions
            .iter()
            .filter(|e| s.everywhere(e.target))
            .count();
        assert_eq!(per, all + 3 * everywhere);
        // Without comparisons the first target and its copies are everywhere.
        let s = schedule(COPIES.split("[[comparison]]").next().unwrap());
        assert_eq!(s.place(0, 5), Place::Every);
        let copy = s.targets.iter().position(|t| t.name == "base-aa2").unwrap();
        assert_eq!(s.place(copy, 5), Place::Every);
    }

    #[test]
    fn the_plan_hash_and_seed_depend_on_the_text_alone() {
        assert_eq!(plan_hash("a"), plan_hash("a"));
        assert_ne!(plan_hash("a"), plan_hash("b"));
        assert_eq!(plan_hash("a").len(), 16);
        assert_eq!(seed_of("a"), seed_of("a"));
        assert_ne!(seed_of("a"), seed_of("b"));
    }
}
