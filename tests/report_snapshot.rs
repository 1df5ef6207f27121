//! Whole reports rendered from fixed result files, compared with reviewed
//! snapshots (`cargo insta review` after an intended change).

use std::path::PathBuf;

use relbench::report::{self, Format};
use relbench::results::load_run;

fn fixture() -> relbench::report::Report {
    let run = load_run(&PathBuf::from("tests/fixtures/results-tiny")).unwrap();
    report::build(&[run], None).unwrap()
}

#[test]
fn markdown_report() {
    insta::assert_snapshot!(Format::Markdown.render(&fixture()));
}

#[test]
fn csv_report() {
    insta::assert_snapshot!(Format::Csv.render(&fixture()));
}

#[test]
fn json_report() {
    insta::assert_snapshot!(Format::Json.render(&fixture()));
}

#[test]
fn html_report() {
    insta::assert_snapshot!(Format::Html.render(&fixture()));
}

#[test]
fn another_base_inverts_the_ratios() {
    let run = load_run(&PathBuf::from("tests/fixtures/results-tiny")).unwrap();
    let a = report::build(std::slice::from_ref(&run), Some("base")).unwrap();
    let b = report::build(&[run], Some("wal")).unwrap();
    for (ra, rb) in a.rows.iter().zip(&b.rows) {
        let x = ra.cells[1].relative.unwrap();
        let y = rb.cells[0].relative.unwrap();
        assert!((x * y - 1.0).abs() < 1e-9, "{}: {x} × {y}", ra.step);
    }
}
