//! `[gate]`: how much slower a candidate may be before `relbench gate`
//! fails it — one allowance for every step, and others per step or per
//! report group. What a merge request's pipeline holds a build to.

use serde::{Deserialize, Serialize};

/// The allowances of `relbench gate`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Gate {
    /// The slowdown any step may show, as a fraction (0.05: 5%).
    pub slower: f64,
    /// Allowances of their own, by step label or report group name, as
    /// the plan lists them; a step's own comes before its group's.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub per: Vec<(String, f64)>,
}

/// The allowance the verdicts' band gives: a step 5% slower is slower.
pub const DEFAULT_SLOWER: f64 = 0.05;

impl Default for Gate {
    fn default() -> Self {
        Gate {
            slower: DEFAULT_SLOWER,
            per: Vec::new(),
        }
    }
}

impl Gate {
    pub fn is_default(&self) -> bool {
        *self == Gate::default()
    }

    /// The slowdown `step` (of report group `group`) may show.
    pub fn allowed(&self, step: &str, group: &str) -> f64 {
        let own = |k: &str| self.per.iter().find(|(n, _)| n == k).map(|(_, v)| *v);
        own(step).or_else(|| own(group)).unwrap_or(self.slower)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_steps_own_allowance_comes_before_its_groups_and_the_plans() {
        let g = Gate {
            slower: 0.05,
            per: vec![("write".into(), 0.10), ("update-index".into(), 0.20)],
        };
        assert_eq!(g.allowed("update-index", "write"), 0.20);
        assert_eq!(g.allowed("update-nonindex", "write"), 0.10);
        assert_eq!(g.allowed("point-query", "point"), 0.05);
    }
}
