//! report.json is the comparison model, and every figure report.html shows
//! comes from it: each number in every table cell of the page, and each
//! sentence of the summary, is found in the JSON. A figure computed in a
//! renderer instead of the model fails here.

use std::path::PathBuf;

use relbench::compare::{self, Report};
use relbench::render::Format;
use relbench::results::{load_run, LoadedRun};

fn run(name: &str) -> LoadedRun {
    load_run(&PathBuf::from("tests/fixtures").join(name)).unwrap()
}

/// The text of every `<td>` whose class marks it as a figure (`n`, with
/// its tone), with the entities decoded.
fn figure_cells(html: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = html;
    while let Some(i) = rest.find("<td class=\"n") {
        rest = &rest[i..];
        let start = rest.find('>').unwrap() + 1;
        let end = rest.find("</td>").unwrap();
        out.push(decode(&rest[start..end]));
        rest = &rest[end..];
    }
    out
}

/// The summary's sentences: the text of each `<li>` up to a nested list.
fn summary_items(html: &str) -> Vec<String> {
    let Some(i) = html.find(">Summary</h2>") else {
        return Vec::new();
    };
    let list = &html[i..html[i..].find("</ul>\n").map_or(html.len(), |j| i + j)];
    list.split("<li>")
        .skip(1)
        .map(|s| decode(s.split(['<']).next().unwrap_or("")))
        .collect()
}

fn decode(s: &str) -> String {
    s.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&#39;", "'")
        .replace("&amp;", "&")
}

/// Each number in a cell with the factor that turns the model's unit into
/// the shown one, and its decimals: `1.2 MiB` is bytes ÷ 1048576, `95.0%`
/// a share × 100, `2.50 ms` µs ÷ 1000.
fn shown_numbers(cell: &str) -> Vec<(f64, f64, i32)> {
    let chars: Vec<char> = cell.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        if !chars[i].is_ascii_digit() {
            i += 1;
            continue;
        }
        let start = i;
        while i < chars.len() && (chars[i].is_ascii_digit() || chars[i] == ',' || chars[i] == '.') {
            i += 1;
        }
        let text: String = chars[start..i].iter().filter(|c| **c != ',').collect();
        let text = text.trim_end_matches('.');
        let mut decimals = text.split_once('.').map_or(0, |(_, d)| d.len() as i32);
        let mut value: f64 = text.parse().unwrap();
        // `4.00e-3`: the exponent moves the last digit.
        if chars.get(i) == Some(&'e') {
            let mut j = i + 1;
            let neg = chars.get(j) == Some(&'-');
            j += usize::from(neg);
            let from = j;
            while j < chars.len() && chars[j].is_ascii_digit() {
                j += 1;
            }
            if j > from {
                let e: i32 = chars[from..j].iter().collect::<String>().parse().unwrap();
                let e = if neg { -e } else { e };
                value *= 10f64.powi(e);
                decimals -= e;
                i = j;
            }
        }
        // A sign shown is the figure's (a change: `-0.040`).
        if start > 0 && matches!(chars[start - 1], '-' | '−') {
            value = -value;
        }
        let unit: String = chars[i..]
            .iter()
            .skip_while(|c| **c == ' ')
            .take_while(|c| c.is_alphabetic() || **c == '%')
            .collect();
        let factor = match unit.as_str() {
            "%" => 100.0,
            "KiB" => 1.0 / 1024.0,
            "MiB" => 1.0 / 1048576.0,
            "GiB" => 1.0 / 1073741824.0,
            "ms" => 1e-3,
            "s" => 1e-6,
            _ => 1.0,
        };
        out.push((value, factor, decimals));
    }
    out
}

fn json_numbers(v: &serde_json::Value, out: &mut Vec<f64>) {
    match v {
        serde_json::Value::Number(n) => out.extend(n.as_f64()),
        serde_json::Value::Array(a) => a.iter().for_each(|x| json_numbers(x, out)),
        serde_json::Value::Object(o) => o.values().for_each(|x| json_numbers(x, out)),
        _ => {}
    }
}

fn json_strings(v: &serde_json::Value, out: &mut Vec<String>) {
    match v {
        serde_json::Value::String(s) => out.push(s.clone()),
        serde_json::Value::Array(a) => a.iter().for_each(|x| json_strings(x, out)),
        serde_json::Value::Object(o) => o.values().for_each(|x| json_strings(x, out)),
        _ => {}
    }
}

/// The figures and sentences of the page that the JSON does not hold.
fn missing_from_json(html: &str, json: &str) -> Vec<String> {
    let json: serde_json::Value = serde_json::from_str(json).unwrap();
    let mut numbers = Vec::new();
    json_numbers(&json, &mut numbers);
    numbers.sort_by(f64::total_cmp);
    let mut strings = Vec::new();
    json_strings(&json, &mut strings);

    let mut missing = Vec::new();
    let cells = figure_cells(html);
    assert!(
        cells.len() > 20,
        "the page has figure cells: {}",
        cells.len()
    );
    for cell in &cells {
        for (value, factor, decimals) in shown_numbers(cell) {
            // Shown rounded to `decimals`: the model's figure lies within
            // half a unit of the last digit.
            let half = 0.5 * 10f64.powi(-decimals) + 1e-9;
            let found = |factor: f64| {
                let (lo, hi) = ((value - half) / factor, (value + half) / factor);
                let from = numbers.partition_point(|x| *x < lo);
                numbers.get(from).is_some_and(|x| *x <= hi)
            };
            // Seconds are a latency in µs, or a duration in seconds; a
            // percentage a share, or a figure kept in percent.
            if !found(factor) && !((factor == 1e-6 || factor == 100.0) && found(1.0)) {
                missing.push(format!("{value} (in \"{cell}\")"));
            }
        }
    }
    for item in summary_items(html) {
        if !strings.contains(&item) {
            missing.push(format!("summary: \"{item}\""));
        }
    }
    missing
}

#[test]
fn every_figure_of_the_page_is_in_the_json() {
    let hostb = {
        let mut b = run("results-tiny");
        b.info.host.hostname = "hostb".into();
        b
    };
    for (what, r) in [
        ("one repeat", compare::build(&[run("results-tiny")], None)),
        (
            "three repeats",
            compare::build(&[run("results-repeats")], None),
        ),
        (
            "Insert Benchmark",
            compare::build(&[run("results-insert")], None),
        ),
        (
            "two hosts",
            compare::build(&[run("results-tiny"), hostb], Some("base")),
        ),
        (
            "a campaign",
            compare::build(&[run("results-campaign")], None),
        ),
        (
            "LinkBench",
            compare::build(&[run("results-linkbench")], None),
        ),
        ("profiles", compare::build(&[run("results-profiles")], None)),
    ] {
        let r: Report = r.unwrap();
        let missing = missing_from_json(&Format::Html.render(&r), &Format::Json.render(&r));
        assert!(
            missing.is_empty(),
            "{what}: the page shows figures report.json lacks:\n{}",
            missing.join("\n")
        );
    }
}

#[test]
fn a_figure_the_model_lacks_is_caught() {
    // The check itself: a page figure that is not in the JSON is reported.
    let r = compare::build(&[run("results-tiny")], None).unwrap();
    let html =
        Format::Html
            .render(&r)
            .replacen("<td class=\"n\">", "<td class=\"n\">987654.321 ", 1);
    let json = Format::Json.render(&r);
    assert_eq!(
        missing_from_json(&html, &json),
        ["987654.321 (in \"987654.321 1\")"]
    );
    // A summary sentence the JSON lacks is caught too.
    let html = html.replacen("<li>", "<li>an invented sentence", 1);
    assert_eq!(missing_from_json(&html, &json).len(), 2);
    assert_eq!(shown_numbers("2.50 ms"), [(2.5, 1e-3, 2)]);
    assert_eq!(
        shown_numbers("~1.31 (1.20–1.42) p=0.10"),
        [(1.31, 1.0, 2), (1.2, 1.0, 2), (1.42, 1.0, 2), (0.1, 1.0, 2)]
    );
    assert_eq!(shown_numbers("13,040,000"), [(13040000.0, 1.0, 0)]);
}
