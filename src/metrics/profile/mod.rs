//! Profiles of a step's window: where the server's processes (an
//! embedded engine's: relbench's own) spent their CPU, where they waited,
//! and the hardware's counters where the host has any.
//!
//! The kernel samples (Linux `perf`, Debian's `linux-perf`): a software
//! CPU clock, which works on virtual machines without a PMU, with call
//! chains, and the scheduler's switches with the chain at each switch
//! out. [`perf::start`] attaches to the processes as the measured window
//! opens and [`perf::Recording::stop`] folds what it saw as it closes
//! ([`fold`]); a profile that could not be taken says why in its
//! [`Meta::error`], never with made-up figures.

pub mod elf;
pub mod fold;
pub mod perf;

use std::collections::BTreeMap;
use std::io::{Read, Write};

/// The most a stored profile's stacks may unpack to: a window's folded
/// stacks are a few MB.
pub const MAX_FOLDED_BYTES: u64 = 256 << 20;

use serde::{Deserialize, Serialize};

/// How the plan profiles (`[profile]`): the sampler's rate, whether it
/// also follows the scheduler, and how call chains are unwound.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Settings {
    /// On-CPU samples per second per thread.
    pub rate_hz: u32,
    /// Off-CPU time per wait site (the scheduler's switches).
    pub off_cpu: bool,
    pub call_graph: CallGraph,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            rate_hz: 499,
            off_cpu: true,
            call_graph: CallGraph::Fp,
        }
    }
}

/// How call chains are followed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CallGraph {
    /// Frame pointers: cheap; a build compiled without them gives the
    /// leaf function and little above it.
    Fp,
    /// DWARF unwinding of a copy of each sample's stack: whole chains
    /// from any build with unwind tables, at a much larger file and cost.
    Dwarf,
}

/// Whether a profile came from a repeat of its own or a measured window.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    /// A profiled repeat after the measured ones: no measured window was
    /// profiled.
    Separate,
    /// The measured window itself was profiled.
    Inline,
}

/// How perf records.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Scope {
    /// The whole machine, every CPU (`-a`), the followed threads' samples
    /// kept when folded: nothing is added to a thread's context switches.
    /// Needs root (or CAP_PERFMON, or `perf_event_paranoid` ≤ 0).
    Machine,
    /// Per process or thread (`-p`, `-t`): every context switch of a
    /// followed thread saves and restores its events, which halved a
    /// MariaDB server's point queries (bench/profile_overhead.py); the
    /// fallback where the machine may not be recorded.
    Threads,
}

/// Whose processes a profile followed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Of {
    /// The server's process tree.
    Server,
    /// relbench itself: its clients and the engine embedded in them.
    Relbench,
}

/// Stacks and their weights in the folded format: `root;…;leaf` →
/// samples (on CPU) or microseconds (off CPU).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Folded(pub BTreeMap<String, u64>);

impl Folded {
    pub fn total(&self) -> u64 {
        self.0.values().sum()
    }

    /// Off-CPU stacks without the idle threads' (`fold::OFF_IDLE`): kept
    /// apart, as they scale with the window's length and not with its
    /// work ([`Folded::idle_us`] is what they weigh).
    pub fn without_idle(mut self) -> Folded {
        self.0.retain(|k, _| !k.starts_with(fold::OFF_IDLE));
        self
    }

    /// The µs idle threads slept (`fold::OFF_IDLE`).
    pub fn idle_us(&self) -> u64 {
        self.0
            .iter()
            .filter(|(k, _)| k.starts_with(fold::OFF_IDLE))
            .map(|(_, v)| v)
            .sum()
    }

    /// The folded text, one `stack weight` a line.
    pub fn to_text(&self) -> String {
        let mut s = String::new();
        for (k, v) in &self.0 {
            s.push_str(k);
            s.push(' ');
            s.push_str(&v.to_string());
            s.push('\n');
        }
        s
    }

    /// Reads folded text (lines that do not end in a weight are skipped).
    pub fn from_text(text: &str) -> Folded {
        let mut m = BTreeMap::new();
        for line in text.lines() {
            if let Some((stack, w)) = line.rsplit_once(' ') {
                if let Ok(w) = w.parse::<u64>() {
                    *m.entry(stack.to_string()).or_default() += w;
                }
            }
        }
        Folded(m)
    }

    /// DEFLATE-compressed (gzip) folded text: how a step's profile is kept.
    pub fn to_gzip(&self) -> Vec<u8> {
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        e.write_all(self.to_text().as_bytes())
            .expect("writing to memory");
        e.finish().expect("writing to memory")
    }

    /// Its folded stacks, at most [`MAX_FOLDED_BYTES`] of them
    /// unpacked: a gzip that unpacks past that was not written by relbench
    /// (a 6.9 MB one grew `relbench profile` to 1.56 GB).
    pub fn from_gzip(bytes: &[u8]) -> std::io::Result<Folded> {
        let mut s = String::new();
        flate2::read::GzDecoder::new(bytes)
            .take(MAX_FOLDED_BYTES + 1)
            .read_to_string(&mut s)?;
        if s.len() as u64 > MAX_FOLDED_BYTES {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                format!("its stacks unpack past {} MiB", MAX_FOLDED_BYTES >> 20),
            ));
        }
        Ok(Folded::from_text(&s))
    }

    /// Each function's weight where it is the leaf (self) and where it is
    /// anywhere on the chain (inclusive, counted once per chain), the
    /// chain's root frame (the thread, or the off-CPU state) left out.
    pub fn by_function(&self) -> BTreeMap<&str, (u64, u64)> {
        let mut m: BTreeMap<&str, (u64, u64)> = BTreeMap::new();
        let mut seen: Vec<&str> = Vec::new();
        for (stack, &w) in &self.0 {
            seen.clear();
            let frames: Vec<&str> = stack.split(';').collect();
            let body = if frames.len() > 1 {
                &frames[1..]
            } else {
                &frames[..]
            };
            for f in body {
                if !seen.contains(f) {
                    seen.push(f);
                    m.entry(f).or_default().1 += w;
                }
            }
            if let Some(leaf) = body.last() {
                m.entry(leaf).or_default().0 += w;
            }
        }
        m
    }
}

/// What a profile is, beside its stacks: how it was taken, how much of it
/// could be named, what it cost.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct Meta {
    pub mode: Option<Mode>,
    /// How perf recorded: the whole machine, or the threads themselves.
    pub scope: Option<Scope>,
    /// Whose processes: a server's, or relbench's own (an embedded engine).
    pub of: Option<Of>,
    pub settings: Option<Settings>,
    /// How long the profiler ran over the window.
    pub secs: f64,
    /// Processes followed (a server's whole process tree).
    pub processes: usize,
    /// On-CPU samples, and those whose function has no name.
    pub samples: u64,
    pub unnamed_samples: u64,
    /// Where the unnamed samples were, and why they have no name.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unnamed: Vec<Unnamed>,
    /// Microseconds off CPU, every wait site of the threads that worked,
    /// and switches whose thread was not back before the profile ended
    /// (not counted).
    pub off_cpu_us: u64,
    /// Microseconds idle threads slept (`fold::OFF_IDLE`): apart from
    /// `off_cpu_us` (0 in a profile from before they were told apart).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub idle_us: u64,
    pub open_switches: u64,
    /// The profiler's own CPU over the window (perf's process).
    pub profiler_cpu_secs: Option<f64>,
    /// Operations in the profiled window, and its own CPU per operation
    /// (the profiled processes'), which turn shares into µs/op when no
    /// measured window is at hand.
    pub ops: Option<f64>,
    pub cpu_us_per_op: Option<f64>,
    pub counters: Counters,
    /// Why the profile is empty or partial, when it is.
    pub error: Option<String>,
    /// Why the profiled window is not quiet (another program used the
    /// machine): a difference against it is not judged.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub disturbed: Option<String>,
}

impl Meta {
    /// Share of on-CPU samples with a function's name.
    pub fn named_share(&self) -> Option<f64> {
        (self.samples > 0).then(|| 1.0 - self.unnamed_samples as f64 / self.samples as f64)
    }
}

/// Unnamed samples in one object file.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Unnamed {
    pub object: String,
    pub samples: u64,
    pub why: String,
}

/// The hardware's counters over the window, where the host has a PMU.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct Counters {
    /// Event → count over the window (instructions, cycles, cache and
    /// TLB misses); absent when not counted.
    #[serde(default)]
    pub values: BTreeMap<String, f64>,
    /// Why they are not there ("not available on this host (no PMU)").
    pub missing: Option<String>,
}

/// A taken profile: its facts and its stacks.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Profile {
    pub meta: Meta,
    pub cpu: Folded,
    pub off: Folded,
}

impl Profile {
    /// A profile that could not be taken, and why.
    pub fn failed(why: String) -> Profile {
        Profile {
            meta: Meta {
                error: Some(why),
                ..Meta::default()
            },
            ..Profile::default()
        }
    }
}

fn is_zero(v: &u64) -> bool {
    *v == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn self_and_inclusive_weights_leave_the_root_out_and_count_a_recursion_once() {
        let f = Folded::from_text("t;a;b;a 3\nt;a;c 2\nt;b 1\nnoweight\n");
        let m = f.by_function();
        assert_eq!(m["a"], (3, 5));
        assert_eq!(m["b"], (1, 4));
        assert_eq!(m["c"], (2, 2));
        assert!(!m.contains_key("t"));
        assert_eq!(Folded::from_gzip(&f.to_gzip()).unwrap(), f);
    }

    /// Regression: a 6.9 MB gzip in a stored profile grew `relbench
    /// profile` to 1.56 GB.
    #[test]
    fn stacks_that_unpack_past_the_bound_are_refused() {
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
        let chunk = vec![b'a'; 1 << 20];
        for _ in 0..=(MAX_FOLDED_BYTES >> 20) {
            gz.write_all(&chunk).unwrap();
        }
        let bomb = gz.finish().unwrap();
        assert!(bomb.len() < 2 << 20, "{}", bomb.len());
        let e = Folded::from_gzip(&bomb).unwrap_err();
        assert!(e.to_string().contains("unpack past"), "{e}");
    }
}
