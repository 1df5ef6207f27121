//! JSON: the whole comparison model, for notebooks and scripts: every
//! figure any other format shows is in it. One comparison is the model
//! itself; several are `{"comparisons": [{"title", "report"}, ...]}`.

use serde::Serialize;

use crate::compare::{Comparison, Report};

#[derive(Serialize)]
struct Titled<'a> {
    title: &'a str,
    report: &'a Report,
}

#[derive(Serialize)]
struct Several<'a> {
    comparisons: Vec<Titled<'a>>,
}

pub fn render(cs: &[Comparison]) -> String {
    let mut s = match cs {
        [one] => serde_json::to_string_pretty(&one.report),
        _ => serde_json::to_string_pretty(&Several {
            comparisons: cs
                .iter()
                .map(|c| Titled {
                    title: &c.title,
                    report: &c.report,
                })
                .collect(),
        }),
    }
    .expect("the report model serializes");
    s.push('\n');
    s
}
