//! `report.html` as a reader sees it: rendered by headless Chromium, with a
//! screenshot that must show the charts' bars, and no console errors.
//! `./test` installs Chromium (Debian package `chromium`).

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

fn chromium() -> PathBuf {
    for name in ["chromium", "chromium-browser", "google-chrome"] {
        if let Ok(out) = Command::new("sh")
            .args(["-c", &format!("command -v {name}")])
            .output()
        {
            let p = String::from_utf8_lossy(&out.stdout).trim().to_string();
            if out.status.success() && !p.is_empty() {
                return PathBuf::from(p);
            }
        }
    }
    panic!("no Chromium found: install the Debian package chromium (./test does)");
}

/// Runs Chromium headless on `page` with the flags a clean, offline,
/// unprivileged run needs, plus `extra`; returns (stdout, stderr).
fn headless(page: &Path, profile: &Path, extra: &[&str]) -> (String, String) {
    let out = Command::new(chromium())
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--enable-logging=stderr",
            "--v=0",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(extra)
        .arg(format!("file://{}", page.display()))
        .output()
        .expect("Chromium starts");
    assert!(
        out.status.success(),
        "Chromium failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Pixels of the screenshot, as RGB.
fn pixels(png_path: &Path) -> (u32, u32, Vec<[u8; 3]>) {
    let decoder = png::Decoder::new(std::fs::File::open(png_path).unwrap());
    let mut reader = decoder.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size()];
    let info = reader.next_frame(&mut buf).unwrap();
    let step = info.color_type.samples();
    let px = buf[..info.buffer_size()]
        .chunks(step)
        .map(|c| [c[0], c[1], c[2]])
        .collect();
    (info.width, info.height, px)
}

fn near(p: [u8; 3], hex: &str) -> bool {
    let c = |i: usize| u8::from_str_radix(&hex[1 + 2 * i..3 + 2 * i], 16).unwrap() as i32;
    (0..3).all(|i| (p[i] as i32 - c(i)).abs() <= 6)
}

#[test]
fn report_html_draws_its_charts_in_a_headless_browser() {
    let dir = tempfile::tempdir().unwrap();
    common::relbench()
        .args([
            "report",
            "tests/fixtures/results-repeats",
            "--format",
            "html",
            "--self-contained",
            "--out",
        ])
        .arg(dir.path())
        .assert()
        .success();
    let page = dir.path().join("report.html");
    let html = std::fs::read_to_string(&page).unwrap();
    // Self-contained: nothing to fetch.
    for needle in ["src=", "<script", "<link", "url("] {
        assert!(!html.contains(needle), "the page refers to {needle}");
    }

    let shot = dir.path().join("shot.png");
    let (_, log) = headless(
        &page,
        &dir.path().join("profile-1"),
        &[
            "--window-size=1280,2600",
            &format!("--screenshot={}", shot.display()),
        ],
    );
    let console: Vec<&str> = log
        .lines()
        .filter(|l| l.contains("CONSOLE") || l.contains("Failed to load") || l.contains("ERR_FILE"))
        .collect();
    assert!(console.is_empty(), "console messages: {console:#?}");

    let (w, h, px) = pixels(&shot);
    assert_eq!((w, h), (1280, 2600));
    let white = px.iter().filter(|p| p.iter().all(|c| *c >= 250)).count();
    assert!(
        white < px.len() * 97 / 100,
        "the page is blank: {white} of {} pixels white",
        px.len()
    );
    // The bars of both targets drew, in their palette colours (base's
    // blue in the database-size chart lower down is outside this
    // viewport; wal's orange bars are in the relative charts at the top).
    let orange = px.iter().filter(|p| near(**p, "#f28e2b")).count();
    assert!(
        orange > 500,
        "only {orange} pixels of the relative bars' colour"
    );

    // The browser parsed the charts as SVG: the DOM it built holds them.
    let (dom, _) = headless(&page, &dir.path().join("profile-2"), &["--dump-dom"]);
    let bars = dom.matches("<rect class=\"bar\"").count();
    assert!(bars >= 20, "{bars} bars in the DOM");
    assert!(dom.contains("Summary") && dom.contains("Hardware efficiency"));
    assert!(dom.matches("<svg").count() >= 10);
}

/// Twelve targets and two comparisons with their own bases and subsets:
/// the overview's heat map (grey: these one-repeat ratios are untested) and the
/// per-group lines render.
#[test]
fn a_many_target_report_shows_its_overview_and_each_comparison() {
    let dir = tempfile::tempdir().unwrap();
    common::relbench()
        .args([
            "report",
            "tests/fixtures/results-many",
            "--self-contained",
            "--format",
            "html,md",
            "--compare",
            "all twelve=delete-full",
            "--compare",
            "sync off the journal=wal-full:wal-full,wal-normal,delete-normal,off-normal",
            "--out",
        ])
        .arg(dir.path())
        .assert()
        .success();
    let page = dir.path().join("report.html");
    let (dom, _) = headless(&page, &dir.path().join("profile-1"), &["--dump-dom"]);
    // Heat-map cells: 11 targets × 7 steps, then 3 × 7.
    let cells = dom.matches("<rect class=\"heat\"").count();
    assert_eq!(cells, 11 * 7 + 3 * 7, "heat-map cells in the DOM");
    let lines = dom.matches("<polyline class=\"series\"").count();
    assert!(lines >= 8, "{lines} lines in the DOM");
    for needle in [
        "Comparison: all twelve",
        "Comparison: sync off the journal",
        "Overview: sync off the journal",
        "Contents",
    ] {
        assert!(dom.contains(needle), "{needle} missing");
    }
    let summaries = dom.matches(">Summary</h3>").count();
    assert_eq!(summaries, 2, "a summary per comparison");
    assert!(dom.contains("off-normal against wal-full"));

    let shot = dir.path().join("shot.png");
    headless(
        &page,
        &dir.path().join("profile-2"),
        &[
            "--window-size=1280,1600",
            &format!("--screenshot={}", shot.display()),
        ],
    );
    let (_, _, px) = pixels(&shot);
    // Tall enough for the per-group lines, which follow each comparison's
    // summary.
    let tall = dir.path().join("tall.png");
    headless(
        &page,
        &dir.path().join("profile-3"),
        &[
            "--window-size=1280,6000",
            &format!("--screenshot={}", tall.display()),
        ],
    );
    let (_, _, tall_px) = pixels(&tall);
    let red = px
        .iter()
        .filter(|p| p[0] as i32 - p[1] as i32 > 60 && p[0] > 150)
        .count();
    let green = px
        .iter()
        .filter(|p| p[1] as i32 - p[0] as i32 > 40 && p[1] > 100)
        .count();
    // One repeat of 0.3 s windows: no test can judge these ratios, so the
    // heat map draws them grey ("not tested"), none red or green.
    let grey = px.iter().filter(|p| near(**p, "#e6e6e6")).count();
    assert!(grey > 2000, "{grey} grey heat-map pixels");
    // (The per-group lines use the palette's red and green: a few hundred
    // pixels; a coloured heat map is thousands.)
    assert!(red < 1500, "{red} red heat-map pixels for untested ratios");
    assert!(
        green < 1500,
        "{green} green heat-map pixels for untested ratios"
    );
    // The per-group lines in the palette's first colour.
    let blue = tall_px.iter().filter(|p| near(**p, "#4e79a7")).count();
    assert!(blue > 100, "{blue} pixels of the first line's colour");

    // The Markdown links a heat map per comparison, each its own file.
    let md = std::fs::read_to_string(dir.path().join("report.md")).unwrap();
    assert!(
        md.contains("(charts/all_twelve-overview-heatmap.svg)"),
        "{md}"
    );
    assert!(md.contains("(charts/sync_off_the_journal-overview-heatmap.svg)"));
    assert!(dir
        .path()
        .join("charts/sync_off_the_journal-overview-heatmap.svg")
        .exists());
}

/// Measures the page in Chromium at 1400 × 900: where the summary's first
/// line and the overview's map begin, and every chart text (titles,
/// legends, labels, slanted or not) that runs out of its chart, as JSON in
/// the document's title.
fn measure(page: &Path, profile: &Path) -> serde_json::Value {
    let probe = page.with_file_name("probe.html");
    let mut html = std::fs::read_to_string(page).unwrap();
    html.push_str(
        r#"<script>
window.addEventListener('load', () => {
  const clipped = [], stacked = [];
  for (const svg of document.querySelectorAll('svg.chart')) {
    const box = svg.getBoundingClientRect();
    for (const t of svg.querySelectorAll('text')) {
      const r = t.getBoundingClientRect();
      if (r.left < box.left - 0.5 || r.right > box.right + 0.5 ||
          r.top < box.top - 0.5 || r.bottom > box.bottom + 0.5) clipped.push(t.textContent);
    }
    const ends = [...svg.querySelectorAll('text.end-label')].map((t) => [t.textContent, t.getBoundingClientRect()]);
    for (let i = 0; i < ends.length; i++)
      for (let j = i + 1; j < ends.length; j++) {
        const [a, ra] = ends[i], [b, rb] = ends[j];
        if (Math.min(ra.bottom, rb.bottom) - Math.max(ra.top, rb.top) > 1 &&
            Math.min(ra.right, rb.right) - Math.max(ra.left, rb.left) > 1) stacked.push(a + ' / ' + b);
      }
  }
  const s = document.getElementById('summary');
  let first = s;
  while (first && first.tagName !== 'UL' && first.tagName !== 'P') first = first.nextElementSibling;
  const map = document.querySelector('#overview ~ .charts svg');
  const top = (e) => e ? Math.round(e.getBoundingClientRect().top + window.scrollY) : -1;
  document.title = JSON.stringify({summary: top(first), map: top(map), clipped, stacked});
});
</script>"#,
    );
    std::fs::write(&probe, html).unwrap();
    let (dom, _) = headless(
        &probe,
        profile,
        &[
            "--window-size=1400,900",
            "--virtual-time-budget=3000",
            "--dump-dom",
        ],
    );
    let title = dom
        .split("<title>")
        .nth(1)
        .and_then(|t| t.split("</title>").next())
        .unwrap_or_else(|| panic!("no title in the dumped page"));
    let title = title.replace("&quot;", "\"").replace("&amp;", "&");
    serde_json::from_str(&title).unwrap_or_else(|e| panic!("{e}: {title}"))
}

/// Regression: the summary began 1,900 px down (a contents list of every
/// heading and five companion charts before it), two-target charts cut
/// their titles ("Load: relative throughput across ta"), twelve
/// targets' legends ran 750 px past their charts, and the line charts'
/// end labels stacked on one another at the top of an axis cut at 4.
#[test]
fn the_summary_and_the_map_are_on_the_first_screen_and_no_chart_text_is_cut() {
    for fixture in ["results-repeats", "results-tiny", "results-many"] {
        let dir = tempfile::tempdir().unwrap();
        common::relbench()
            .args(["report", &format!("tests/fixtures/{fixture}")])
            .args(["--format", "html", "--self-contained", "--out"])
            .arg(dir.path())
            .assert()
            .success();
        let m = measure(&dir.path().join("report.html"), &dir.path().join("profile"));
        let (summary, map) = (m["summary"].as_i64().unwrap(), m["map"].as_i64().unwrap());
        assert!(
            (0..=900).contains(&map),
            "{fixture}: the map begins at {map} px: {m}"
        );
        if fixture != "results-many" {
            // Twelve targets' summaries are a page of their own; with a few
            // the first line is on the first screen.
            assert!(
                (0..=900).contains(&summary),
                "{fixture}: the summary begins at {summary} px: {m}"
            );
        }
        assert_eq!(m["clipped"], serde_json::json!([]), "{fixture}: {m}");
        assert_eq!(m["stacked"], serde_json::json!([]), "{fixture}: {m}");
    }
}

/// A study of `copies` × the many-target fixture's twelve targets: the
/// same step files under new target names (the figures are real).
fn many_targets(dir: &Path, copies: usize) -> PathBuf {
    let src = Path::new("tests/fixtures/results-many");
    let out = dir.join("study");
    let mut info: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(src.join("run.json")).unwrap()).unwrap();
    let plan_targets = info["plan"]["targets"].as_array().unwrap().clone();
    let records = info["targets"].as_array().unwrap().clone();
    let (mut new_plan, mut new_records) = (Vec::new(), Vec::new());
    for k in 0..copies {
        for t in &plan_targets {
            let old = t["name"].as_str().unwrap();
            let name = if k == 0 {
                old.to_string()
            } else {
                format!("{old}-{k}")
            };
            let mut t = t.clone();
            t["name"] = name.clone().into();
            new_plan.push(t);
            if let Some(r) = records.iter().find(|r| r["name"] == old) {
                let mut r = r.clone();
                r["name"] = name.clone().into();
                new_records.push(r);
            }
            let to = out.join("steps").join(&name);
            std::fs::create_dir_all(&to).unwrap();
            for f in std::fs::read_dir(src.join("steps").join(old)).unwrap() {
                let f = f.unwrap().path();
                let mut step: serde_json::Value =
                    serde_json::from_str(&std::fs::read_to_string(&f).unwrap()).unwrap();
                step["target"] = name.clone().into();
                std::fs::write(to.join(f.file_name().unwrap()), step.to_string()).unwrap();
            }
        }
    }
    info["plan"]["targets"] = new_plan.into();
    info["targets"] = new_records.into();
    std::fs::write(out.join("run.json"), info.to_string()).unwrap();
    out
}

/// The compact page (what `run` and `report` write by default) of a
/// 96-target study: the overview is drawn at once, the time it took is
/// printed (the figure goes in bench/README.md), and every collapsed
/// section, once opened, draws the same table cells as the self-contained
/// page holds.
#[test]
fn a_large_report_paints_its_overview_first_and_draws_each_section_when_opened() {
    let dir = tempfile::tempdir().unwrap();
    let study = many_targets(dir.path(), 8);
    for (out, extra) in [("compact", None), ("whole", Some("--self-contained"))] {
        let mut c = common::relbench();
        c.args(["report", "--format", "html", "--out"])
            .arg(dir.path().join(out))
            .arg(&study);
        if let Some(x) = extra {
            c.arg(x);
        }
        c.assert().success();
    }
    let compact = dir.path().join("compact/report.html");
    let whole = std::fs::read_to_string(dir.path().join("whole/report.html")).unwrap();
    let size = std::fs::metadata(&compact).unwrap().len();
    assert!(dir.path().join("compact/charts").is_dir());
    let mut html = std::fs::read_to_string(&compact).unwrap();
    assert!(
        html.contains("<img src=\"charts/"),
        "charts are files beside the page"
    );
    html.push_str(
        r#"<script>
window.addEventListener('load', () => {
  const painted = performance.now();
  const fcp = performance.getEntriesByType('paint').find((p) => p.name === 'first-contentful-paint');
  const map = document.querySelector('#overview ~ .charts svg rect.heat');
  const before = document.querySelectorAll('td').length;
  for (const s of document.querySelectorAll('details.section')) s.open = true;
  setTimeout(() => {
    document.title = JSON.stringify({painted, fcp: fcp ? fcp.startTime : null, map: !!map,
      before, after: document.querySelectorAll('td').length,
      sections: document.querySelectorAll('details.section').length});
  }, 500);
});
</script>"#,
    );
    let probe = dir.path().join("compact/probe.html");
    std::fs::write(&probe, html).unwrap();
    let (dom, log) = headless(
        &probe,
        &dir.path().join("profile"),
        &[
            "--window-size=1400,900",
            "--virtual-time-budget=5000",
            "--dump-dom",
        ],
    );
    assert!(!log.contains("Uncaught"), "{log}");
    let title = dom
        .split("<title>")
        .nth(1)
        .and_then(|t| t.split("</title>").next())
        .unwrap_or_else(|| panic!("no title in the dumped page"));
    let m: serde_json::Value =
        serde_json::from_str(&title.replace("&quot;", "\"").replace("&amp;", "&")).unwrap();
    eprintln!(
        "96 targets: report.html {:.2} MB (self-contained {:.2} MB); load at {:.0} ms, first contentful paint at {} ms",
        size as f64 / 1e6,
        whole.len() as f64 / 1e6,
        m["painted"].as_f64().unwrap(),
        m["fcp"]
    );
    assert_eq!(m["map"], true, "the overview's map is drawn at once: {m}");
    assert!(m["sections"].as_u64().unwrap() >= 5, "{m}");
    // Opened, the sections draw every cell the self-contained page has.
    let cells = whole.matches("<td").count() as u64;
    assert!(m["before"].as_u64().unwrap() < cells / 4, "{m}");
    assert_eq!(m["after"].as_u64().unwrap(), cells, "{m}");
    assert!(
        size < whole.len() as u64 / 2,
        "{size} against {}",
        whole.len()
    );
}

/// The profiles' flame graphs as a reader sees them: drawn (frames with a
/// width on the page, inside its width), and hovering a frame says its
/// function and µs/op (the frame under the pointer has a `<title>`).
#[test]
fn flame_graphs_draw_and_hovering_a_frame_names_its_function_and_cost() {
    let dir = tempfile::tempdir().unwrap();
    common::relbench()
        .args(["report", "tests/fixtures/results-profiles"])
        .args(["--format", "html", "--self-contained", "--out"])
        .arg(dir.path())
        .assert()
        .success();
    let page = dir.path().join("report.html");
    let probe = dir.path().join("probe.html");
    let mut html = std::fs::read_to_string(&page).unwrap();
    html.push_str(
        r#"<script>
window.addEventListener('load', () => {
  const graphs = [...document.querySelectorAll('svg.flame')];
  const page = document.documentElement.clientWidth;
  const out = {graphs: graphs.length, drawn: 0, outside: 0, hover: []};
  for (const svg of graphs) {
    const box = svg.getBoundingClientRect();
    if (box.right > page + 1) out.outside++;
    const frames = [...svg.querySelectorAll('rect.frame')].filter((r) => r.getBoundingClientRect().width > 1);
    out.drawn += frames.length;
    // The widest frame above the root: what the pointer finds at its middle.
    const f = frames.slice(1).sort((a, b) => b.getBoundingClientRect().width - a.getBoundingClientRect().width)[0];
    if (!f) continue;
    f.scrollIntoView();
    const r = f.getBoundingClientRect();
    const hit = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);
    const g = hit && hit.closest('g');
    const t = g && g.querySelector('title');
    out.hover.push(t ? t.textContent : null);
  }
  document.title = JSON.stringify(out);
});
</script>"#,
    );
    std::fs::write(&probe, html).unwrap();
    let (dom, _) = headless(
        &probe,
        &dir.path().join("profile"),
        &[
            "--window-size=1280,900",
            "--virtual-time-budget=5000",
            "--dump-dom",
        ],
    );
    let title = dom
        .split("<title>")
        .nth(1)
        .and_then(|t| t.split("</title>").next())
        .unwrap()
        .replace("&quot;", "\"")
        .replace("&amp;", "&");
    let m: serde_json::Value =
        serde_json::from_str(&title).unwrap_or_else(|e| panic!("{e}: {title}"));
    // Three targets × two steps × on and off CPU.
    assert_eq!(m["graphs"], 12, "{m}");
    assert!(m["drawn"].as_u64().unwrap() > 100, "{m}");
    assert_eq!(m["outside"], 0, "a flame graph runs past the page: {m}");
    let hover = m["hover"].as_array().unwrap();
    assert_eq!(hover.len(), 12, "{m}");
    for h in hover {
        let h = h
            .as_str()
            .unwrap_or_else(|| panic!("a frame without a title: {m}"));
        // "function: 1.234 µs/op (…)"
        assert!(h.contains(": ") && h.contains(" µs/op"), "{h}");
    }
}
