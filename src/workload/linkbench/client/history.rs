//! The lists a requester pages on (`getLinkListTail`): each list whose
//! page was read full, with the time of the last link read, kept as the
//! original's `LinkBenchRequest` keeps them — including its index of the
//! lists it holds, which keeps a list dropped from any place but the last
//! (`removeTailCacheEntry`), so that list is never paged again. The
//! corrected behaviour (`tail_history = "corrected"`) forgets it.

use std::collections::HashSet;

use rand::Rng as _;

use crate::workload::dist::Rng;

/// The most lists kept (the original's `listTailHistoryLimit`).
pub(super) const HISTORY: usize = 2048;

/// A list: (id1, link_type, time of the last link read).
type Entry = (i64, i64, i64);

pub(super) struct TailHistory {
    entries: Vec<Entry>,
    /// The lists the index holds (`listTailHistoryIndex`): one in it is
    /// not added again.
    known: HashSet<(i64, i64)>,
    corrected: bool,
}

impl TailHistory {
    pub fn new(corrected: bool) -> TailHistory {
        TailHistory {
            entries: Vec::new(),
            known: HashSet::new(),
            corrected,
        }
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// A list to page on, drawn uniformly, and where it is kept.
    pub fn pick(&self, rng: &mut Rng) -> (usize, Entry) {
        let i = rng.random_range(0..self.entries.len());
        (i, self.entries[i])
    }

    /// A first page read full (`addTailCacheEntry`): the list kept once,
    /// a random one replaced when [`HISTORY`] are kept.
    pub fn seen_full(&mut self, id1: i64, link_type: i64, last: i64, rng: &mut Rng) {
        if self.known.contains(&(id1, link_type)) {
            return;
        }
        if self.entries.len() < HISTORY {
            self.entries.push((id1, link_type, last));
            self.known.insert((id1, link_type));
        } else {
            let i = rng.random_range(0..self.entries.len());
            self.drop(i, Some((id1, link_type, last)));
        }
    }

    /// The next page of the list at `slot` was read: full, the list moves
    /// on to its last link; not, the list is dropped.
    pub fn paged(&mut self, slot: usize, full: Option<i64>) {
        match full {
            Some(last) => self.entries[slot].2 = last,
            None => self.drop(slot, None),
        }
    }

    /// `removeTailCacheEntry(pos, repl)`: the entry at `pos` removed (the
    /// last one moved into its place) or replaced by `repl`. The original
    /// takes the entry out of its index only when it was the last one;
    /// from any other place it stays there (regression: relbench forgot
    /// it, and paged lists again that the original does not).
    fn drop(&mut self, pos: usize, repl: Option<Entry>) {
        let key = |e: Entry| (e.0, e.1);
        let last = self.entries.len() - 1;
        if pos == last || self.corrected {
            self.known.remove(&key(self.entries[pos]));
        }
        let repl = match repl {
            Some(r) => r,
            None if pos == last => {
                self.entries.pop();
                return;
            }
            None => self.entries.pop().expect("a later entry"),
        };
        self.entries[pos] = repl;
        self.known.insert(key(repl));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    #[test]
    fn a_list_dropped_from_the_middle_is_not_kept_again_as_the_original_does() {
        let mut rng = Rng::seed_from_u64(1);
        for corrected in [false, true] {
            let mut h = TailHistory::new(corrected);
            h.seen_full(1, 1, 100, &mut rng);
            h.seen_full(2, 1, 200, &mut rng);
            h.seen_full(1, 1, 50, &mut rng);
            assert_eq!(h.entries.len(), 2, "a list is kept once");
            // List 1 (not the last) reaches its end and is dropped; list
            // 2 takes its place.
            h.paged(0, None);
            assert_eq!(h.entries, vec![(2, 1, 200)]);
            h.seen_full(1, 1, 100, &mut rng);
            let kept_again = h.entries.iter().any(|e| e.0 == 1);
            assert_eq!(kept_again, corrected, "corrected = {corrected}");
            // The last list dropped is forgotten either way.
            let last = h.entries.len() - 1;
            let (id1, ..) = h.entries[last];
            h.paged(last, None);
            h.seen_full(id1, 1, 10, &mut rng);
            assert!(h.entries.iter().any(|e| e.0 == id1));
        }
    }

    #[test]
    fn a_full_page_moves_the_list_on_and_the_history_holds_at_most_its_limit() {
        let mut rng = Rng::seed_from_u64(2);
        let mut h = TailHistory::new(false);
        h.seen_full(7, 1, 1000, &mut rng);
        h.paged(0, Some(900));
        assert_eq!(h.pick(&mut rng), (0, (7, 1, 900)));
        for id in 0..(HISTORY as i64 + 100) {
            h.seen_full(100 + id, 1, 5, &mut rng);
        }
        assert_eq!(h.entries.len(), HISTORY);
    }
}
