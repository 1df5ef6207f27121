//! Report formats: each lays out the comparison model (`compare`) and
//! computes nothing of its own. The document's outline (headings, tables,
//! charts, in order) is built once in [`outline`]; Markdown and HTML each
//! write its blocks, the terminal prints its relative table, CSV lists the
//! measurements one per line, and JSON is the model itself.

mod csv;
mod escape;
pub mod gate;
pub mod history;
mod html;
mod json;
mod markdown;
mod outline;
mod overview;
mod svg;
mod terminal;
mod text;

pub use terminal::relative_table as terminal_relative_table;

use std::path::{Path, PathBuf};

use anyhow::Context;

use crate::compare::{self, Comparison, ComparisonSpec, Grouping, Report};
use crate::results;
use outline::Block;

/// The report formats, by the name `--format` takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Markdown,
    Csv,
    Json,
    Html,
    /// Plain text for a blog post.
    Text,
}

impl Format {
    pub const ALL: [Format; 5] = [
        Format::Markdown,
        Format::Csv,
        Format::Json,
        Format::Html,
        Format::Text,
    ];

    pub fn parse(s: &str) -> Option<Format> {
        match s {
            "md" | "markdown" => Some(Format::Markdown),
            "csv" => Some(Format::Csv),
            "json" => Some(Format::Json),
            "html" => Some(Format::Html),
            "txt" | "text" => Some(Format::Text),
            _ => None,
        }
    }

    pub fn file_name(self) -> &'static str {
        match self {
            Format::Markdown => "report.md",
            Format::Csv => "report.csv",
            Format::Json => "report.json",
            Format::Html => "report.html",
            Format::Text => "report.txt",
        }
    }

    /// The format's text of one comparison: every target of `r` against
    /// its base.
    pub fn render(self, r: &Report) -> String {
        let cs = [Comparison {
            title: format!("against {}", r.base),
            report: r.clone(),
        }];
        self.render_all(&cs, r)
    }

    /// The format's text of the comparisons `cs`; `all` is the report of
    /// every target, for what belongs to the runs.
    pub fn render_all(self, cs: &[Comparison], all: &Report) -> String {
        match self {
            Format::Markdown | Format::Html => self.render_doc(cs, &outline::document(cs, all)),
            _ => self.render_doc(cs, &[]),
        }
    }

    /// The text from the comparisons and, for Markdown and HTML, their
    /// document, built once for both (the self-contained page).
    fn render_doc(self, cs: &[Comparison], doc: &[Block]) -> String {
        self.render_page(cs, doc, true)
    }

    /// As [`Format::render_doc`], the HTML self-contained or compact.
    fn render_page(self, cs: &[Comparison], doc: &[Block], self_contained: bool) -> String {
        match self {
            Format::Markdown => markdown::render(doc),
            Format::Csv => csv::render(cs),
            Format::Json => json::render(cs),
            Format::Html if self_contained => html::render(doc),
            Format::Html => html::render_compact(doc),
            Format::Text => text::render(cs),
        }
    }
}

/// Reads the directories, builds each comparison (with none given, every
/// target against `base`) and writes each format into `out` (the HTML
/// compact, its charts as files beside it, unless `self_contained`).
/// Returns the comparisons and the files written.
pub fn write(
    dirs: &[PathBuf],
    base: Option<&str>,
    comparisons: &[ComparisonSpec],
    grouping: Grouping,
    out: &Path,
    formats: &[Format],
    self_contained: bool,
) -> anyhow::Result<(Vec<Comparison>, Vec<PathBuf>)> {
    // A merge's shards are runs of their own (each host's base its own).
    let runs: Vec<_> = dirs
        .iter()
        .map(|d| crate::results::load_runs(d))
        .collect::<anyhow::Result<Vec<_>>>()?
        .into_iter()
        .flatten()
        .collect();
    let mut cs = compare::build_all(&runs, base, comparisons)?;
    // What belongs to the runs comes from every target: the one
    // comparison when there are no others, a report of them all otherwise.
    let mut full = (!comparisons.is_empty())
        .then(|| compare::build(&runs, base))
        .transpose()?;
    for r in cs.iter_mut().map(|c| &mut c.report).chain(full.as_mut()) {
        r.regroup(grouping);
    }
    let all = full.as_ref().unwrap_or(&cs[0].report);
    results::refuse_link(out)?;
    std::fs::create_dir_all(out).with_context(|| format!("creating {}", out.display()))?;
    let needs_doc = |f: &Format| matches!(f, Format::Markdown | Format::Html);
    // Each format's text on its own thread: the CSV and the JSON while
    // the document is built, then Markdown and HTML from it (a 100-target
    // report spent a second writing them one after another).
    let (doc, texts) = std::thread::scope(|scope| {
        let cs = &cs;
        let early: Vec<_> = formats
            .iter()
            .filter(|f| !needs_doc(f))
            .map(|&f| (f, scope.spawn(move || f.render_doc(cs, &[]))))
            .collect();
        let doc = if formats.iter().any(needs_doc) {
            outline::document(cs, all)
        } else {
            Vec::new()
        };
        let late: Vec<(Format, String)> = std::thread::scope(|inner| {
            let doc = &doc;
            let handles: Vec<_> = formats
                .iter()
                .filter(|f| needs_doc(f))
                .map(|&f| {
                    (
                        f,
                        inner.spawn(move || f.render_page(cs, doc, self_contained)),
                    )
                })
                .collect();
            handles
                .into_iter()
                .map(|(f, h)| (f, h.join().expect("a report format's thread panicked")))
                .collect()
        });
        let mut texts: Vec<(Format, String)> = early
            .into_iter()
            .map(|(f, h)| (f, h.join().expect("a report format's thread panicked")))
            .collect();
        texts.extend(late);
        (doc, texts)
    });
    let mut written = Vec::new();
    let charts_beside =
        formats.contains(&Format::Markdown) || (formats.contains(&Format::Html) && !self_contained);
    if charts_beside {
        // The Markdown and the compact HTML link their charts as files
        // beside them.
        let dir = out.join(markdown::CHARTS_DIR);
        results::refuse_link(&dir)?;
        std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
        for c in markdown::charts(&doc) {
            results::write_file(&dir.join(&c.file), c.svg.as_bytes())?;
        }
        written.push(dir);
    }
    // In the order asked.
    for f in formats {
        let path = out.join(f.file_name());
        let text = &texts.iter().find(|(g, _)| g == f).expect("rendered").1;
        results::write_file(&path, text.as_bytes())?;
        written.push(path);
    }
    Ok((cs, written))
}
