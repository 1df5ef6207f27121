//! Whole reports rendered from fixed result files, compared with reviewed
//! snapshots (`cargo insta review` after an intended change).

use std::path::PathBuf;

use relbench::compare as report;
use relbench::render::Format;
use relbench::results::load_run;

fn fixture() -> relbench::compare::Report {
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

/// The text a reader of the HTML sees, a line per block: the markup and
/// the charts' geometry are checked by the browser test, not here.
fn html_text(html: &str) -> String {
    let mut out = String::new();
    let mut rest = html;
    while let Some(i) = rest.find('<') {
        out.push_str(&rest[..i]);
        let Some(j) = rest[i..].find('>') else { break };
        let tag = &rest[i + 1..i + j];
        let name = tag
            .trim_start_matches('/')
            .split([' ', '>'])
            .next()
            .unwrap_or("");
        if matches!(
            name,
            "tr" | "p"
                | "h1"
                | "h2"
                | "h3"
                | "h4"
                | "li"
                | "ul"
                | "summary"
                | "details"
                | "svg"
                | "pre"
                | "div"
        ) {
            out.push('\n');
        } else if matches!(name, "td" | "th" | "text") {
            out.push_str(" | ");
        }
        rest = &rest[i + j + 1..];
    }
    out.push_str(rest);
    out.lines()
        .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
        .filter(|l| !l.is_empty() && l != "|")
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn html_report() {
    insta::assert_snapshot!(html_text(&Format::Html.render(&fixture())));
}

#[test]
fn another_base_inverts_the_ratios() {
    let run = load_run(&PathBuf::from("tests/fixtures/results-tiny")).unwrap();
    let a = report::build(std::slice::from_ref(&run), Some("base")).unwrap();
    let b = report::build(&[run], Some("wal")).unwrap();
    for (ra, rb) in a.rows.iter().zip(&b.rows) {
        let x = ra.cells[1].test.relative.unwrap();
        let y = rb.cells[0].test.relative.unwrap();
        assert!((x * y - 1.0).abs() < 1e-9, "{}: {x} × {y}", ra.id.step);
    }
}

fn repeats() -> relbench::results::LoadedRun {
    load_run(&PathBuf::from("tests/fixtures/results-repeats")).unwrap()
}

#[test]
fn markdown_report_with_repeats() {
    let r = report::build(&[repeats()], None).unwrap();
    insta::assert_snapshot!(Format::Markdown.render(&r));
}

#[test]
fn html_report_with_repeats() {
    let r = report::build(&[repeats()], None).unwrap();
    insta::assert_snapshot!(html_text(&Format::Html.render(&r)));
}

/// Regression: at 3 against 3 repeats the rank-sum test could never
/// reach p < 0.05, so a change every round showed was "not significant".
/// Now every cell is tested on its rounds, paired: a change is coloured
/// only when its interval is clear of 1, the same only when its interval
/// lies inside the band, and an undecided cell says how many repeats
/// would decide it.
#[test]
fn three_repeats_give_three_answers_each_as_its_interval_shows() {
    let r = report::build(&[repeats()], None).unwrap();
    let wal = r.targets.iter().position(|t| t.name == "wal").unwrap();
    let mut seen = Vec::new();
    for row in &r.rows {
        let c = &row.cells[wal];
        assert_eq!(c.figures.repeats, 3, "{}", row.id.step);
        let s = c.test.significance.as_ref().expect("both sides repeated");
        assert_eq!(s.method, report::Method::Paired, "{}", row.id.step);
        assert_eq!(s.rounds, Some(3));
        let i = s.interval.expect("an interval");
        assert!((i.level - 0.95).abs() < 1e-9);
        let rel = c.test.relative.unwrap();
        assert!(i.lo <= rel && rel <= i.hi, "{}: {rel} {i:?}", row.id.step);
        let v = c.verdict().unwrap();
        match v {
            report::Verdict::Worse | report::Verdict::Better => {
                assert!(i.hi < 1.0 || i.lo > 1.0, "{}: {i:?}", row.id.step)
            }
            report::Verdict::Same => {
                assert!(i.lo > 0.95 && i.hi < 1.05, "{}: {i:?}", row.id.step)
            }
            report::Verdict::Undecided => {
                let inside = i.lo > 0.955 && i.hi < 1.045;
                let changed = (rel <= 0.955 || rel >= 1.045) && (i.hi < 1.0 || i.lo > 1.0);
                assert!(!inside && !changed, "{}: {rel} {i:?}", row.id.step);
                let at_an_edge = (0.94..0.96).contains(&rel) || (1.04..1.06).contains(&rel);
                if !at_an_edge {
                    assert!(s.repeats_needed.is_some(), "{}: {s:?}", row.id.step);
                }
            }
            // A window too short to judge is said, not judged.
            report::Verdict::TooShort => {}
            other => panic!("{}: {other:?}", row.id.step),
        }
        seen.push(v);
    }
    assert!(
        seen.iter().any(|v| v.is_change()),
        "the fixture's writes are several times faster in every round: {seen:?}"
    );
    let md = Format::Markdown.render(&r);
    assert!(md.contains("🟢") || md.contains("🔴"), "{md}");
}

/// The tiny fixture as if measured again on a second host, with the WAL
/// target 20% slower there.
fn on_host_b() -> relbench::results::LoadedRun {
    let mut run = load_run(&PathBuf::from("tests/fixtures/results-tiny")).unwrap();
    run.dir = PathBuf::from("results-hostb");
    run.info.host.hostname = "hostb".into();
    for s in &mut run.steps {
        if s.id.target == "wal" {
            s.throughput *= 0.8;
        }
    }
    run
}

#[test]
fn two_hosts_side_by_side_each_against_its_own_base() {
    let a = load_run(&PathBuf::from("tests/fixtures/results-tiny")).unwrap();
    let host_a = a.info.host.hostname.clone();
    let one = report::build(std::slice::from_ref(&a), None).unwrap();
    let r = report::build(&[a, on_host_b()], Some("base")).unwrap();
    assert_eq!(r.hosts, vec![host_a.clone(), "hostb".to_string()]);
    let names: Vec<&str> = r.targets.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(
        names,
        vec![
            format!("{host_a}/base"),
            format!("{host_a}/wal"),
            "hostb/base".into(),
            "hostb/wal".into()
        ]
    );
    // hostb's wal is compared with hostb's base: 0.8 of host A's ratio.
    for (row, row1) in r.rows.iter().zip(&one.rows) {
        let (ra, rb) = (
            row.cells[1].test.relative.unwrap(),
            row.cells[3].test.relative.unwrap(),
        );
        assert!((ra - row1.cells[1].test.relative.unwrap()).abs() < 1e-9);
        assert!(
            (rb / ra - 0.8).abs() < 1e-9,
            "{}: {rb} vs {ra}",
            row.id.step
        );
    }
    insta::assert_snapshot!(Format::Markdown.render(&r));
}

#[test]
fn two_hosts_render_as_column_groups_in_html() {
    let a = load_run(&PathBuf::from("tests/fixtures/results-tiny")).unwrap();
    let host_a = a.info.host.hostname.clone();
    let r = report::build(&[a, on_host_b()], None).unwrap();
    let html = Format::Html.render(&r);
    assert!(html.contains(&format!("<th colspan=\"1\" class=\"group\">{host_a}</th>")));
    assert!(html.contains("<th colspan=\"1\" class=\"group\">hostb</th>"));
    // A base named for all hosts at once is a qualified name.
    let err = report::build(
        &[
            load_run(&PathBuf::from("tests/fixtures/results-tiny")).unwrap(),
            on_host_b(),
        ],
        Some("nosuch"),
    )
    .unwrap_err()
    .to_string();
    assert!(err.contains("hostb/wal") && err.contains("base"), "{err}");
}

#[test]
fn markdown_report_of_the_insert_benchmark() {
    let run = load_run(&PathBuf::from("tests/fixtures/results-insert")).unwrap();
    let r = report::build(&[run], None).unwrap();
    let md = Format::Markdown.render(&r);
    // The tables the benchmark adds, and its steps in their own group
    // (these results are from when its statements were prepared, which
    // each step's title now says: the benchmark sends text).
    for part in [
        "### Insert Benchmark",
        "| l.i0 prepared | 2 |",
        "## Insert Benchmark: background writes and the SLA",
        "## Insert Benchmark: response times",
    ] {
        assert!(md.contains(part), "{part}");
    }
    insta::assert_snapshot!(md);
}

#[test]
fn a_step_the_sequence_runs_twice_is_two_rows_not_two_repeats() {
    // The standard sequence runs scan:warm twice; the report once merged
    // the two as repeats of one row.
    let mut run = load_run(&PathBuf::from("tests/fixtures/results-tiny")).unwrap();
    let again: Vec<_> = run
        .steps
        .iter()
        .filter(|s| s.id.at.step.to_string() == "scan")
        .cloned()
        .map(|mut s| {
            s.id.seq += 20;
            s.id.at.occurrence = 2;
            s.throughput *= 2.0;
            s
        })
        .collect();
    run.steps.extend(again);
    let r = report::build(&[run], None).unwrap();
    let scans: Vec<_> = r
        .rows
        .iter()
        .filter(|row| row.id.step.to_string() == "scan")
        .collect();
    assert_eq!(scans.len(), 4, "two occurrences × two client counts");
    for row in &scans {
        assert!(
            row.cells.iter().all(|c| c.figures.repeats == 1),
            "{}",
            row.title()
        );
    }
    assert_eq!(scans[1].title(), "scan");
    assert_eq!(scans[2].title(), "scan #2");
    let md = Format::Markdown.render(&r);
    assert!(md.contains("| scan #2 |"), "{md}");
}

#[test]
fn an_outlier_gets_a_second_chart_with_the_axis_cut_and_marked() {
    // The tiny fixture's writes: delete at 160× and 122× against 27–34×.
    let html = Format::Html.render(&fixture());
    assert!(html.contains("Writes: throughput relative to base, y-axis cut at"));
    assert_eq!(
        html.matches("<polygon class=\"cut\"").count(),
        2,
        "both delete bars"
    );
    // The other groups have no outlier and no second chart.
    assert_eq!(
        html.matches("y-axis cut at").count(),
        2,
        "title and its <title>"
    );
}

/// The held fixture of twelve SQLite configurations.
fn many() -> relbench::results::LoadedRun {
    relbench::results::load_run(std::path::Path::new("tests/fixtures/results-many")).unwrap()
}

#[test]
fn text_export_of_twelve_targets() {
    let r = relbench::compare::build(&[many()], None).unwrap();
    insta::assert_snapshot!(Format::Text.render(&r));
}

#[test]
fn markdown_of_two_comparisons_over_twelve_targets() {
    let runs = [many()];
    let specs = [
        relbench::compare::ComparisonSpec {
            title: "journal modes".into(),
            base: Some("delete-full".into()),
            targets: ["delete-full", "truncate-full", "persist-full", "wal-full"]
                .map(String::from)
                .to_vec(),
        },
        relbench::compare::ComparisonSpec {
            title: "synchronous".into(),
            base: Some("wal-full".into()),
            targets: ["wal-full", "wal-normal"].map(String::from).to_vec(),
        },
    ];
    let cs = relbench::compare::build_all(&runs, None, &specs).unwrap();
    let all = relbench::compare::build(&runs, None).unwrap();
    let md = Format::Markdown.render_all(&cs, &all);
    // Each comparison its own summary, against its own base.
    assert!(md.contains("### Summary"));
    assert!(md.contains("- truncate-full against delete-full"));
    assert!(md.contains("- wal-normal against wal-full"));
    assert!(!md.contains("- wal-normal against delete-full"));
    insta::assert_snapshot!(md);
}

/// Regression: the summary called regressions "new CPU overhead" on steps
/// the CPU did not bound (fsync waits at 41% busy among them). Over every
/// held fixture, that phrase only follows "CPU-bound".
#[test]
fn new_cpu_overhead_is_said_only_of_cpu_bound_steps() {
    for dir in [
        "results-tiny",
        "results-repeats",
        "results-insert",
        "results-many",
    ] {
        let run =
            relbench::results::load_run(&std::path::Path::new("tests/fixtures").join(dir)).unwrap();
        let r = relbench::compare::build(&[run], None).unwrap();
        for line in r.summary_lines.iter().flat_map(|l| &l.details) {
            if line.contains("new CPU overhead") {
                assert!(
                    line.contains("CPU-bound") && !line.contains("not CPU-bound"),
                    "{dir}: {line}"
                );
            }
        }
    }
}

/// Regression: "not CPU-bound (80%): cs/op ×11.28, CPU/op ×2.28: more
/// waiting (locks, IO or the network)" of SQLite reading from the page
/// cache: the machine's context switches (every program's and the
/// kernel's) and the machine's CPU judged an embedded engine. Over every
/// held fixture (all SQLite): no explanation rests on the machine's
/// context switches, and no step that moved no bytes on either side and
/// whose threads kept the cores they can use busy is said to be waiting.
/// (A step whose threads left a quarter of them idle, with 60,000 context
/// switches a second, may well be waiting on a lock: that is said.)
#[test]
fn an_embedded_engine_that_moved_no_bytes_and_kept_its_cores_busy_is_never_said_to_be_waiting() {
    use relbench::compare::Cost;
    let mut checked = 0;
    for dir in [
        "results-tiny",
        "results-repeats",
        "results-insert",
        "results-many",
        "results-disturbed",
    ] {
        let run =
            relbench::results::load_run(&std::path::Path::new("tests/fixtures").join(dir)).unwrap();
        let r = relbench::compare::build(&[run], None).unwrap();
        for row in &r.rows {
            for (ti, c) in row.cells.iter().enumerate() {
                let base = &row.cells[r.base_of[ti]];
                let no_io = |x: &relbench::compare::Cell| {
                    [Cost::ReadKb, Cost::WriteKb]
                        .iter()
                        .all(|k| x.hardware.costs.get(k).is_none_or(|v| *v < 0.01))
                };
                let Some(rel) = c.test.relative else { continue };
                if r.is_base(ti) {
                    continue;
                }
                let e = relbench::compare::explain(rel, c, base);
                assert!(!e.contains("machine cs"), "{dir} {}: {e}", row.title());
                // Whose window the explanation reads: the target's for a
                // regression, the base's for a win.
                let judged = if rel < 1.0 { c } else { base };
                let busy = judged
                    .hardware
                    .own_cpu_pct
                    .zip(judged.hardware.usable_cores)
                    .is_some_and(|(u, cap)| u / cap >= relbench::compare::OWN_CPU_BOUND_PCT);
                if !no_io(c) || !no_io(base) || !busy {
                    continue;
                }
                checked += 1;
                assert!(!e.contains("waiting"), "{dir} {}: {e}", row.title());
            }
        }
    }
    assert!(checked >= 10, "only {checked} cells moved no bytes");
}

/// By position: the reads before the first write, the writes, the reads
/// after them and the inserts and deletes at the end; point-query before
/// and after the writes lands in both halves.
#[test]
fn groups_by_position_split_the_sequence_around_the_writes() {
    use relbench::workload::Group;
    let mut run =
        relbench::results::load_run(std::path::Path::new("tests/fixtures/results-tiny")).unwrap();
    // The fixture's steps, renumbered so the reads come before and after
    // update-index: load, point-query, update-index, scan, read-only-100,
    // delete, insert.
    for s in &mut run.steps {
        s.id.seq = match s.id.at.step.label().as_str() {
            "load" => 1,
            "settle" => 2,
            "point-query" => 3,
            "update-index" => 4,
            "scan" => 6,
            "read-only-100" => 7,
            "delete" => 8,
            "insert" => 9,
            _ => s.id.seq,
        };
    }
    let mut r = relbench::compare::build(&[run], None).unwrap();
    r.regroup(relbench::compare::Grouping::Position);
    let of = |label: &str| {
        r.rows
            .iter()
            .find(|row| row.id.step.label() == label)
            .map(|row| row.group)
            .unwrap()
    };
    assert_eq!(of("load"), Group::Load);
    assert_eq!(of("point-query"), Group::Before);
    assert_eq!(of("update-index"), Group::WriteHeavy);
    assert_eq!(of("scan"), Group::After);
    assert_eq!(of("read-only-100"), Group::After);
    assert_eq!(of("delete"), Group::InsertDelete);
    assert_eq!(of("insert"), Group::InsertDelete);
    // The rows are in group order, then sequence order.
    let groups: Vec<Group> = r.rows.iter().map(|row| row.group).collect();
    let mut sorted = groups.clone();
    sorted.sort_by_key(|g| Group::ALL.iter().position(|x| x == g));
    assert_eq!(groups, sorted);
}

/// One colour rule in every table and format: a ratio printed at or below
/// 0.95 is red, at or above 1.05 green, between them plain, unless it is
/// marked as not judged (`~`, a bracketed reason) — in the Markdown's
/// relative tables and in the heat map's cells alike.
#[test]
fn one_colour_rule_in_every_table_and_format() {
    let run =
        relbench::results::load_run(std::path::Path::new("tests/fixtures/results-many")).unwrap();
    let r = relbench::compare::build(&[run], None).unwrap();
    let md = Format::Markdown.render(&r);
    let mut checked = 0;
    let mut in_relative = false;
    for line in md.lines() {
        if line.starts_with("#### ") {
            in_relative = line == "#### Relative";
        }
        if !in_relative || !line.starts_with("| ") || line.starts_with("| step") {
            continue;
        }
        for cell in line
            .split('|')
            .skip(3)
            .map(str::trim)
            .filter(|c| !c.is_empty())
        {
            let Some(v) = cell
                .split_whitespace()
                .next()
                .and_then(|x| x.parse::<f64>().ok())
            else {
                continue;
            };
            if cell.contains("(untested)") {
                // Not judged by any test: never coloured.
                assert!(!cell.contains('🔴') && !cell.contains('🟢'), "{cell}");
                checked += 1;
                continue;
            }
            if cell.contains('(') || cell.starts_with('~') {
                continue; // not judged, said why
            }
            let red = cell.contains('🔴');
            let green = cell.contains('🟢');
            assert_eq!(red, v <= 0.95, "{cell}");
            assert_eq!(green, v >= 1.05, "{cell}");
            checked += 1;
        }
    }
    assert!(checked > 50, "{checked} cells checked");
    // The heat map: each cell's fill against the ratio it prints.
    let dir = tempfile::tempdir().unwrap();
    relbench::render::write(
        &[std::path::PathBuf::from("tests/fixtures/results-many")],
        None,
        &[],
        relbench::compare::Grouping::Kind,
        dir.path(),
        &[Format::Markdown],
        false,
    )
    .unwrap();
    let svg = std::fs::read_to_string(dir.path().join("charts/overview-heatmap.svg")).unwrap();
    let mut cells = 0;
    for part in svg.split("<rect class=\"heat\"").skip(1) {
        let fill = &part[part.find("fill=\"#").unwrap() + 7..][..6];
        let rgb: Vec<i32> = (0..3)
            .map(|i| i32::from_str_radix(&fill[2 * i..2 * i + 2], 16).unwrap())
            .collect();
        let text = part.split("</text>").next().unwrap();
        let v: f64 = text[text.rfind('>').unwrap() + 1..].parse().unwrap();
        let tip = &part[part.find("<title>").unwrap()..part.find("</title>").unwrap()];
        let grey = rgb[0] == rgb[1] && rgb[1] == rgb[2] && rgb[0] < 250;
        let (red, green) = (rgb[0] > rgb[1] + 10, rgb[1] > rgb[0] + 10);
        if grey {
            assert!(
                tip.contains("not judged")
                    || tip.contains("too short")
                    || tip.contains("not significant")
                    || tip.contains("not tested"),
                "grey without a reason: {tip}"
            );
        } else {
            assert_eq!(red, v <= 0.95, "{v}: fill #{fill}");
            assert_eq!(green, v >= 1.05, "{v}: fill #{fill}");
        }
        cells += 1;
    }
    assert_eq!(cells, 11 * 7);
}

/// Regression: when the base failed to start, every other target's ratio
/// read "—" with no word on why. The report says so at the top, keeps the
/// others' absolute figures, and names the --base that would compare them.
#[test]
fn a_base_that_measured_nothing_is_said_at_the_top_with_the_base_to_use() {
    let mut run =
        relbench::results::load_run(std::path::Path::new("tests/fixtures/results-tiny")).unwrap();
    run.steps.retain(|s| s.id.target != "base" || s.id.seq == 1);
    for s in run.steps.iter_mut().filter(|s| s.id.target == "base") {
        s.failed = Some("the server would not start: unknown option '--skip-test-db'".into());
    }
    let r = relbench::compare::build(&[run], None).unwrap();
    let md = Format::Markdown.render(&r);
    let top: String = md.lines().take(8).collect::<Vec<_>>().join("\n");
    assert!(
        top.contains(
            "The base, base, has no figure on any step (it failed: the server would not start"
        ),
        "{top}"
    );
    assert!(top.contains("--base wal`"), "{top}");
    // wal's own figures are still there.
    let abs = md.split("#### Absolute").nth(2).unwrap();
    assert!(
        abs.lines()
            .any(|l| l.starts_with("| point-query") && !l.contains("| — | —")),
        "{abs}"
    );
}

#[test]
fn markdown_report_of_a_campaign() {
    let run = load_run(&PathBuf::from("tests/fixtures/results-campaign")).unwrap();
    let r = report::build(&[run], None).unwrap();
    let md = Format::Markdown.render(&r);
    // Run order across phases, where each begins, the intervals, the
    // maintenance steps' durations, and the size with its logs apart.
    for part in [
        "## Campaign: the sequence in run order",
        "| load | load | 1 |",
        "| query | point-query @1/2 | 1 |",
        "|  | point-query @2/2 | 1 |",
        "|  | drop-index | 1 |",
        "| end | drop-table | 1 |",
        "### Database size after each step",
        "(apparent ",
    ] {
        assert!(md.contains(part), "{part}\n{md}");
    }
    insta::assert_snapshot!(md);
}

#[test]
fn markdown_report_of_linkbench() {
    let run = load_run(&PathBuf::from("tests/fixtures/results-linkbench")).unwrap();
    let r = report::build(&[run], None).unwrap();
    let md = Format::Markdown.render(&r);
    for part in [
        "## LinkBench",
        "### Load",
        "### Requests per second",
        "### Latency per operation",
        "| lb.request | rollback | get_link_list |",
        "### Consistency",
        "| rollback | 500 | 0 | consistent",
    ] {
        assert!(md.contains(part), "{part}");
    }
    insta::assert_snapshot!(md);
}

/// Regression: report.txt passed disturbed ratios off as the version's
/// ("QPS ratios … 0.59, 0.94", "write KiB/query ratios … 11048.95", other
/// programs' IO on the shared disk), the cost and rate tables coloured the
/// machine's figures from disturbed windows, and the charts drew them like
/// judged ones. One target of the fixture had three windows shared with a
/// compiler that took 48% of the machine.
#[test]
fn disturbed_figures_are_marked_in_every_output_and_never_coloured() {
    let run = load_run(&PathBuf::from("tests/fixtures/results-disturbed")).unwrap();
    let r = report::build(&[run], None).unwrap();
    let txt = Format::Text.render(&r);
    insta::assert_snapshot!("disturbed_text", txt);
    // Every ratio of a disturbed step in the text is marked.
    let block = txt
        .split("## delete-normal")
        .nth(1)
        .unwrap()
        .split("## ")
        .next()
        .unwrap();
    assert!(block.contains("* disturbed:"), "{block}");
    // A group with a disturbed step marks every line of ratios (the costs
    // too) and says what the mark means; the others have no mark.
    for group in block.split("\n\n") {
        let said = group.contains("* disturbed:");
        for line in group.lines().filter(|l| l.contains("ratios")) {
            assert_eq!(line.contains('*'), said, "{group}");
        }
    }
    let md = Format::Markdown.render(&r);
    insta::assert_snapshot!("disturbed_markdown", md);
    // No table colours a disturbed row: in the relative and the cost
    // tables, a row that says "disturbed" has no red or green.
    for line in md
        .lines()
        .filter(|l| l.starts_with('|') && l.contains("disturbed"))
    {
        let cells: Vec<&str> = line.split('|').collect();
        for c in cells.iter().filter(|c| c.contains("disturbed")) {
            assert!(!c.contains('🔴') && !c.contains('🟢'), "coloured: {line}");
        }
    }
    assert!(
        md.contains("delete-normal (disturbed)"),
        "the machine rates do not mark the disturbed windows"
    );
    // The charts: disturbed bars hollow, the heat map's disturbed cells
    // violet with a *, apart from the grey of "not significant".
    let dir = tempfile::tempdir().unwrap();
    relbench::render::write(
        &[PathBuf::from("tests/fixtures/results-disturbed")],
        None,
        &[],
        relbench::compare::Grouping::Kind,
        dir.path(),
        &[Format::Markdown],
        false,
    )
    .unwrap();
    let charts = dir.path().join("charts");
    let heat = std::fs::read_to_string(charts.join("overview-heatmap.svg")).unwrap();
    let violet = heat.matches("fill=\"#dcd6f0\"").count();
    assert_eq!(violet, 3, "three disturbed cells");
    assert!(heat.matches("*</text>").count() >= 3);
    let bars: String = std::fs::read_dir(&charts)
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with("relative-"))
        .map(|e| std::fs::read_to_string(e.path()).unwrap())
        .collect();
    // Three disturbed cells, some drawn twice (a group's chart and its
    // cut one); none of them solid.
    assert!(
        bars.matches("class=\"bar disturbed\"").count() >= 3,
        "hollow bars"
    );
}

#[test]
fn markdown_report_of_tpcc() {
    let run = load_run(&PathBuf::from("tests/fixtures/results-tpcc")).unwrap();
    let r = report::build(&[run], None).unwrap();
    let md = Format::Markdown.render(&r);
    for part in [
        "## TPC-C",
        "### Load",
        "### tpmC",
        "| tpcc.run | 2 | rollback |",
        "### Response time per transaction",
        "| tpcc.run | rollback | new-order |",
        "### Consistency",
        "| rollback | 2 | conditions 1–4 hold",
    ] {
        assert!(md.contains(part), "{part}\n{md}");
    }
    // Every format lays out the same model: the JSON has the figures.
    let json: serde_json::Value = serde_json::from_str(&Format::Json.render(&r)).unwrap();
    let runs = json["tpcc"]["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 2);
    for r in runs {
        let (tpmc, total) = (
            r["tpmc"].as_f64().unwrap(),
            r["tpm_total"].as_f64().unwrap(),
        );
        // New orders are 45 of every 100 transactions dealt.
        assert!((tpmc / total - 0.45).abs() < 0.01, "{r}");
    }
    insta::assert_snapshot!(md);
}
