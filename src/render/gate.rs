//! The gate's judgement laid out: `gate.md` (a merge request's comment),
//! `gate.xml` (JUnit: each step a test case, a regression a failure with
//! its cause) and `gate.json`. Figures come from `compare::gate` only.

use std::fmt::Write as _;

use super::escape::escape;
use crate::compare::gate::{Answer, Case, Judgement};

fn ratio(c: &Case) -> String {
    match (c.ratio, c.interval) {
        (Some(r), Some(i)) => format!("{r:.2} ({:.2}–{:.2})", i.lo, i.hi),
        (Some(r), None) => format!("{r:.2}"),
        _ => "—".into(),
    }
}

fn name(c: &Case) -> String {
    format!("{} c{}", c.step, c.clients)
}

/// `gate.md`: the outcome, the steps that did not pass with why, then
/// every step in a table.
pub fn markdown(j: &Judgement) -> String {
    let mut s = format!(
        "## relbench gate: {} against {} — {} (exit {})\n\n",
        j.candidate,
        j.reference,
        j.outcome.word(),
        j.exit_code()
    );
    let _ = writeln!(
        s,
        "{} steps: {} passed, {} regression(s), {} undecided, {} failed. Candidate ÷ reference throughput \
         over interleaved rounds (95% interval); a regression is slower than its allowance with its \
         interval clear of 1, a pass is shown no slower than it (one-sided test at 5%).\n",
        j.cases.len(),
        j.count(Answer::Pass),
        j.count(Answer::Regression),
        j.count(Answer::Undecided),
        j.count(Answer::Failed)
    );
    for a in [Answer::Regression, Answer::Failed, Answer::Undecided] {
        let cases: Vec<&Case> = j.cases.iter().filter(|c| c.answer == a).collect();
        if cases.is_empty() {
            continue;
        }
        let title = match a {
            Answer::Regression => "Regressions",
            Answer::Failed => "Failed steps",
            _ => "Undecided",
        };
        let _ = writeln!(s, "### {title}\n");
        for c in cases {
            let _ = writeln!(s, "- **{}**: {}", name(c), c.why);
        }
        s.push('\n');
    }
    s.push_str(
        "| step | clients | candidate ÷ reference | allowed | answer |\n|---|---:|---:|---:|---|\n",
    );
    for c in &j.cases {
        let _ = writeln!(
            s,
            "| {} | {} | {} | {:.0}% | {} |",
            c.step,
            c.clients,
            ratio(c),
            c.allowed * 100.0,
            c.answer.word()
        );
    }
    s
}

/// `gate.xml`: JUnit's shape, as CI systems read it. A regression is a
/// `<failure>`, a failed step an `<error>`, an undecided one `<skipped>`
/// (neither passed nor failed; the exit code says 4).
pub fn junit(j: &Judgement, secs: f64) -> String {
    let (f, e, sk) = (
        j.count(Answer::Regression),
        j.count(Answer::Failed),
        j.count(Answer::Undecided),
    );
    let n = j.cases.len();
    let suite = escape(&format!("{} against {}", j.candidate, j.reference));
    let mut s = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let _ = writeln!(
        s,
        "<testsuites name=\"relbench gate\" tests=\"{n}\" failures=\"{f}\" errors=\"{e}\" skipped=\"{sk}\" time=\"{secs:.3}\">"
    );
    let _ = writeln!(
        s,
        "  <testsuite name=\"{suite}\" tests=\"{n}\" failures=\"{f}\" errors=\"{e}\" skipped=\"{sk}\" time=\"{secs:.3}\">"
    );
    let class = escape(&format!("relbench.gate.{}", j.candidate));
    for c in &j.cases {
        let _ = write!(
            s,
            "    <testcase classname=\"{class}\" name=\"{}\"",
            escape(&name(c))
        );
        let msg = escape(&ratio(c));
        let why = escape(&c.why);
        match c.answer {
            Answer::Pass => s.push_str("/>\n"),
            Answer::Regression => {
                let _ = writeln!(
                    s,
                    ">\n      <failure type=\"regression\" message=\"{msg}\">{why}</failure>\n    </testcase>"
                );
            }
            Answer::Failed => {
                let _ = writeln!(
                    s,
                    ">\n      <error type=\"failed\" message=\"{why}\">{why}</error>\n    </testcase>"
                );
            }
            Answer::Undecided => {
                let _ = writeln!(
                    s,
                    ">\n      <skipped message=\"undecided: {why}\"/>\n    </testcase>"
                );
            }
        }
    }
    s.push_str("  </testsuite>\n</testsuites>\n");
    s
}

/// `gate.json`: the judgement as it is, with its exit code.
pub fn json(j: &Judgement) -> String {
    let mut v = serde_json::to_value(j).unwrap_or_default();
    v["exit_code"] = j.exit_code().into();
    serde_json::to_string_pretty(&v).unwrap_or_default() + "\n"
}
