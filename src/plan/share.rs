//! A step's clients split over several client hosts: `run --client-share
//! I/M` runs clients I, I+M, I+2M, … (numbered from 1) of every step, so
//! that M processes on M hosts drive one server with the step's whole
//! load. Each client keeps the number, seed and ids it has in a run of one
//! process, so the shares never draw the same ids and together send what
//! one process would. The shares meet at a barrier in the database under
//! test before each step and again before its measured window
//! (`runner::barrier`); `relbench merge` adds their results up exactly.

use std::fmt;
use std::time::Duration;

use serde::{Deserialize, Serialize};

/// The most parts a plan is cut into (shards) or a step's clients split
/// over (client shares): more than any scheduler array or client fleet
/// here, and a bound on what a count read from a command line or a file
/// may allocate (regression: `check --shards 4294967295` aborted on a
/// 171 GB allocation, and a merge of a run.json claiming that many parts
/// grew without end).
pub const MAX_PARTS: u32 = 10_000;

/// Whether `index` of `count` is a part: 1 ≤ index ≤ count ≤ [`MAX_PARTS`].
pub fn is_part(index: u32, count: u32) -> bool {
    (1..=MAX_PARTS).contains(&count) && (1..=count).contains(&index)
}

/// `I/N` with 1 ≤ I ≤ N ≤ [`MAX_PARTS`]: a part of a whole (a shard, a
/// client share).
pub(super) fn part_of(text: &str) -> Option<(u32, u32)> {
    let (i, n) = text.split_once('/')?;
    let (index, count): (u32, u32) = (i.trim().parse().ok()?, n.trim().parse().ok()?);
    is_part(index, count).then_some((index, count))
}

/// Share I of M, numbered from 1.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClientShare {
    pub index: u32,
    pub count: u32,
}

impl fmt::Display for ClientShare {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

impl ClientShare {
    /// `I/M`, 1 ≤ I ≤ M.
    pub fn parse(text: &str) -> Result<ClientShare, String> {
        let bad = || {
            format!(
                "--client-share {text}: write I/M (this process runs clients I, I+M, I+2M, … of every step, \
                 1 ≤ I ≤ M, e.g. 2/3)"
            )
        };
        let (index, count) = part_of(text).ok_or_else(bad)?;
        Ok(ClientShare { index, count })
    }

    /// Whether client `c` (from 0) of a step is this share's.
    pub fn has(self, c: u32) -> bool {
        c % self.count == self.index - 1
    }

    /// This share's clients (from 0) of a step with `clients`.
    pub fn clients(self, clients: u32) -> impl Iterator<Item = u32> {
        (0..clients).filter(move |&c| self.has(c))
    }

    /// The share that does what only one process may: create and load
    /// the tables, run maintenance steps and hooks.
    pub fn leads(self) -> bool {
        self.index == 1
    }
}

/// How the shares of one study meet: the name all M processes were given
/// (a study's barrier rows are told apart from another's by it), and how
/// long one waits for the others before it gives the step up.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rendezvous {
    pub share: ClientShare,
    pub id: String,
    pub timeout: Duration,
}

impl Rendezvous {
    /// A barrier id: what a database's string literal and a file name hold
    /// without escaping.
    pub fn check_id(id: &str) -> Result<(), String> {
        if id.is_empty()
            || id.len() > 64
            || !id
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "-_.:".contains(c))
        {
            return Err(format!(
                "--barrier {id:?}: give 1 to 64 letters, digits, '-', '_', '.' or ':' (the same on every \
                 share, new for each study, e.g. the Slurm job id)"
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shares_cover_every_client_once() {
        for m in 1..5 {
            for clients in [1, 2, 7, 16] {
                let mut seen: Vec<u32> = (1..=m)
                    .flat_map(|i| ClientShare { index: i, count: m }.clients(clients))
                    .collect();
                seen.sort();
                assert_eq!(seen, (0..clients).collect::<Vec<_>>());
            }
        }
        assert_eq!(
            ClientShare::parse("2/3")
                .unwrap()
                .clients(7)
                .collect::<Vec<_>>(),
            [1, 4]
        );
        for bad in ["0/2", "3/2", "2", "a/b", "1/0"] {
            assert!(ClientShare::parse(bad).is_err(), "{bad}");
        }
        assert!(Rendezvous::check_id("job-1234.5:x").is_ok());
        for bad in ["", "a'b", "a b", &"x".repeat(65)] {
            assert!(Rendezvous::check_id(bad).is_err(), "{bad}");
        }
    }
}
