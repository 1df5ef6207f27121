//! The catalogue: every workload a plan can name, as values. The built-in
//! entries (sysbench's microbenchmarks, the Insert Benchmark's,
//! LinkBench's and TPC-C's steps, each family with the plan's parameters), the
//! parameterised sysbench entries and q-steps the plan's steps name, the
//! plan's own SQL workloads and the commands of its sysbench scripts. A plan's catalogue is made from the
//! plan's data alone, so a plan read back from a run's record gets the
//! same one; there is no process-wide registry and nothing to register.

use std::sync::Arc;

use super::insert;
use super::linkbench;
use super::lua::LuaSpec;
use super::script::{Script, ScriptSpec};
use super::sysbench::{self, knobs};
use super::tpcc;
use super::Workload;

/// One entry: shared by the schedule's executions that run it.
pub type Entry = Arc<dyn Workload>;

#[derive(Clone)]
pub struct Catalogue {
    /// Built-in entries first, in `relbench list`'s order, then the plan's
    /// own workloads, then entries made from the names steps use.
    entries: Vec<Entry>,
    /// The Insert Benchmark's sizes, for q-steps made from their names.
    insert: insert::Params,
}

impl std::fmt::Debug for Catalogue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list()
            .entries(self.entries.iter().map(|e| e.meta().name))
            .finish()
    }
}

/// A step's name the catalogue cannot make an entry of.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Unresolved {
    #[error(transparent)]
    Parameters(#[from] knobs::BadParameters),
    #[error("\"{given}\" is written \"{canonical}\" (parameters in their canonical order)")]
    NotCanonical { given: String, canonical: String },
    #[error("\"{0}\" is not a workload")]
    NotAWorkload(String),
}

impl Catalogue {
    /// The built-in entries with each family's defaults.
    pub fn builtin() -> Catalogue {
        Catalogue::new(
            &insert::Params::default(),
            &linkbench::Params::default(),
            &tpcc::Params::default(),
            &[],
            &[],
        )
    }

    /// The built-in entries with a plan's parameters, and its own
    /// workloads.
    pub fn new(
        insert: &insert::Params,
        linkbench: &linkbench::Params,
        tpcc: &tpcc::Params,
        scripts: &[ScriptSpec],
        lua: &[LuaSpec],
    ) -> Catalogue {
        let mut entries: Vec<Entry> = Vec::new();
        entries.extend(
            sysbench::CATALOGUE
                .iter()
                .map(|m| Arc::new(m.clone()) as Entry),
        );
        entries.extend(
            insert::steps(insert)
                .into_iter()
                .map(|s| Arc::new(s) as Entry),
        );
        entries.extend(
            linkbench::steps(linkbench)
                .into_iter()
                .map(|s| Arc::new(s) as Entry),
        );
        entries.extend(tpcc::steps(tpcc).into_iter().map(|s| Arc::new(s) as Entry));
        entries.extend(scripts.iter().map(|s| Arc::new(Script::new(s)) as Entry));
        for spec in lua {
            let spec = Arc::new(spec.clone());
            entries.extend(
                LuaSpec::entries(&spec)
                    .into_iter()
                    .map(|w| Arc::new(w) as Entry),
            );
        }
        Catalogue {
            entries,
            insert: *insert,
        }
    }

    /// The entry of that name, as a step names it.
    pub fn find(&self, name: &str) -> Option<&Entry> {
        self.entries.iter().find(|e| e.meta().name == name)
    }

    /// The entry of that name, made and kept when it is a sysbench entry
    /// with parameters (`read-only-order[order=4]`, which must be written
    /// canonically: [`knobs::canonical_name`]) or a q-step at another rate
    /// (`qr2000`, with the Insert Benchmark's sizes the catalogue has).
    pub fn resolve(&mut self, name: &str) -> Result<Entry, Unresolved> {
        if let Some(e) = self.find(name) {
            return Ok(e.clone());
        }
        let made: Entry = if name.contains('[') {
            let m = knobs::parameterised(name)?;
            if m.name != name {
                return Err(Unresolved::NotCanonical {
                    given: name.to_string(),
                    canonical: m.name.into_owned(),
                });
            }
            Arc::new(m)
        } else {
            match insert::query_step(name, &self.insert) {
                Some(s) => Arc::new(s),
                None => return Err(Unresolved::NotAWorkload(name.to_string())),
            }
        };
        self.entries.push(made.clone());
        Ok(made)
    }

    /// Every entry, in catalogue order.
    pub fn entries(&self) -> impl Iterator<Item = &Entry> {
        self.entries.iter()
    }

    /// Every entry's name, for a did-you-mean.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.entries.iter().map(|e| e.meta().name)
    }

    /// Whether the benchmark a built-in workload reimplements sends its
    /// statements as text (LinkBench's JDBC without server-side prepare,
    /// iibench.py's mysqlclient): its steps do too unless the plan says
    /// `prepared = true`. sysbench prepares, and so do its workloads.
    pub fn sends_text(name: &str) -> bool {
        insert::is_step(name) || linkbench::kind(name).is_some()
    }

    /// Whether `name` is a built-in workload (or a q-step at some rate):
    /// what a results file of schema version 2, which wrote steps as
    /// labels, needs to split a label into workload and tag.
    pub fn is_builtin(name: &str) -> bool {
        sysbench::CATALOGUE.iter().any(|m| m.name == name)
            || insert::is_step(name)
            || linkbench::kind(name).is_some()
            || tpcc::kind(name).is_some()
    }
}
