//! What relbench knows, without running anything: `relbench list` (the
//! suites, the catalogue, the parameters), `show` (a workload's SQL per
//! engine), `init` (an example plan).

use std::path::Path;

use anyhow::{bail, Context};

use crate::db::Dialect;
use crate::plan::{self, Maint, Plan};
use crate::workload::catalogue::Catalogue;
use crate::workload::{self, sysbench};

pub(super) fn list() {
    crate::outln!("Suites:");
    crate::outln!(
        "  sysbench  the standard sequence ({} steps): {}",
        sysbench::STANDARD_SEQUENCE.len(),
        sysbench::STANDARD_SEQUENCE.join(" → ")
    );
    crate::outln!(
        "  insert    the Insert Benchmark ({} steps): {}",
        workload::insert::SEQUENCE.len(),
        workload::insert::SEQUENCE.join(" → ")
    );
    crate::outln!(
        "  linkbench LinkBench ({} steps): {}",
        workload::linkbench::SEQUENCE.len(),
        workload::linkbench::SEQUENCE.join(" → ")
    );
    crate::outln!(
        "  tpcc      TPC-C ({} steps): {}",
        workload::tpcc::SEQUENCE.len(),
        workload::tpcc::SEQUENCE.join(" → ")
    );
    crate::outln!("\nWorkloads (name, group, how long it runs, what one event does):");
    for w in Catalogue::builtin().entries() {
        crate::outln!(
            "  {:<22} {:<16} {:<7} {}",
            w.meta().name,
            w.meta().group.name(),
            runs_for(w.as_ref()),
            w.meta().about
        );
    }
    crate::outln!(
        "\nParameters of the sysbench workloads, as sysbench's options: NAME[key=value,...], e.g. read-only-order[order=4,range=1000]:"
    );
    for (k, about) in sysbench::knobs::KEYS {
        crate::outln!("  {k:<22} {about}");
    }
    crate::outln!("\nLinkBench's parameters ([linkbench], the original's names and defaults):");
    for (k, about) in workload::linkbench::KEYS {
        crate::outln!("  {k:<22} {about}");
    }
    crate::outln!("\nTPC-C's parameters ([tpcc]):");
    for (k, about) in workload::tpcc::KEYS {
        crate::outln!("  {k:<22} {about}");
    }
    crate::outln!("\nMaintenance steps (timed; `relbench show NAME` prints their SQL):");
    for m in Maint::ALL {
        crate::outln!("  {:<22} {}", m.name(), m.about());
    }
    crate::outln!("\nSteps in a plan: \"load\", \"settle\", a maintenance step, or a workload, optionally tagged (\"scan:warm\").");
}

/// The plan duration a workload runs for, or "rows" for a step with a
/// fixed amount of work (the Insert Benchmark's loads and index build).
fn runs_for(w: &dyn workload::Workload) -> &'static str {
    let probe = workload::Scale::probe();
    if w.events(&probe, 1).is_some() {
        return "rows";
    }
    match w.meta().duration {
        workload::DurationClass::Read => "read",
        workload::DurationClass::Write => "write",
        workload::DurationClass::Insert => "insert",
    }
}

/// The tables each target of a plan creates, in its own dialect.
pub(super) fn show_targets_load(plan: &Plan, only: Option<&str>) -> anyhow::Result<()> {
    let targets: Vec<_> = plan
        .targets
        .iter()
        .filter(|t| only.map_or(true, |n| n == t.name))
        .collect();
    if let (Some(n), true) = (only, targets.is_empty()) {
        let names: Vec<&str> = plan.targets.iter().map(|t| t.name.as_str()).collect();
        bail!(
            "the plan has no target \"{n}\"; its targets are {}",
            names.join(", ")
        );
    }
    for t in targets {
        crate::outln!("-- target {} ({})", t.name, t.engine);
        crate::outln!(
            "{}{};",
            sysbench::sql::create_table(t.engine.dialect(), 1),
            t.table_suffix()
        );
        crate::outln!("{}; -- after the rows", sysbench::sql::create_index(1));
        crate::outln!();
    }
    Ok(())
}

/// A workload's (or `load`'s, or a maintenance step's) SQL for every
/// engine, from the catalogue given (the built-in one, or a plan's).
pub(super) fn show(name: &str, cat: &Catalogue) -> anyhow::Result<()> {
    if name == "load" {
        for d in Dialect::ALL {
            crate::outln!("-- {}", d.name());
            crate::outln!("{};", sysbench::sql::create_table(d, 1));
            crate::outln!(
                "{}; -- {} rows per statement; rows per commit and bulk-load settings depend on the engine",
                sysbench::sql::insert_rows(d, 1, 2),
                sysbench::load::ROWS_PER_STATEMENT,
            );
            crate::outln!("{}; -- after the rows", sysbench::sql::create_index(1));
            if let Some(s) = sysbench::sql::after_load(d, 1) {
                crate::outln!("{s};");
            }
            crate::outln!();
        }
        return Ok(());
    }
    if let Some(m) = Maint::find(name) {
        crate::outln!("{} — a timed maintenance step: {}\n", m.name(), m.about());
        let tables: Vec<String> = (1..=2).map(sysbench::sql::table).collect();
        for d in Dialect::ALL {
            crate::outln!("-- {}", d.name());
            let statements = m.statements(d, &tables);
            if statements.is_empty() {
                crate::outln!("(no SQL: the managed server is stopped with its clean-shutdown signal and started again)");
            }
            for s in statements {
                crate::outln!("{s};");
            }
            crate::outln!();
        }
        crate::outln!("(shown for 2 tables; it runs once per table of the plan)");
        return Ok(());
    }
    let found = match cat.find(name) {
        Some(w) => Some(w.clone()),
        // An entry with parameters, or a q-step at another rate, is made
        // from its name.
        None => cat.clone().resolve(name).ok(),
    };
    let Some(w) = found else {
        let names = cat
            .names()
            .chain(["load"])
            .chain(Maint::ALL.map(Maint::name));
        let hint = crate::util::did_you_mean(name, names).map_or_else(
            || "`relbench list` shows every workload".to_string(),
            |m| format!("did you mean \"{m}\"?"),
        );
        bail!("unknown workload \"{name}\"; {hint}");
    };
    crate::outln!(
        "{} — group {}, runs {}{}",
        w.meta().name,
        w.meta().group.name(),
        match runs_for(w.as_ref()) {
            "rows" => "until its rows are done".to_string(),
            class => format!("for the plan's {class} duration"),
        },
        if w.meta().transactional {
            "; one event is one transaction"
        } else {
            ""
        }
    );
    crate::outln!("{}\n", w.meta().about);
    for d in Dialect::ALL {
        crate::outln!("-- {}", d.name());
        for s in w.statements(d) {
            crate::outln!("{:<16} {}", s.class, s.sql);
        }
        crate::outln!();
    }
    Ok(())
}

pub(super) fn init(file: &Path, force: bool) -> anyhow::Result<()> {
    if file.exists() && !force {
        bail!(
            "{} exists; pass --force to overwrite it, or name another file",
            file.display()
        );
    }
    std::fs::write(file, plan::EXAMPLE_PLAN)
        .with_context(|| format!("writing {}", file.display()))?;
    crate::outln!(
        "wrote {}; check it with `relbench check {}`",
        file.display(),
        file.display()
    );
    Ok(())
}
