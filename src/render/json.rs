//! JSON: the whole comparison model, for notebooks and scripts: every
//! figure any other format shows is in it.

use crate::compare::Report;

pub fn render(r: &Report) -> String {
    let mut s = serde_json::to_string_pretty(r).expect("the report model serializes");
    s.push('\n');
    s
}
