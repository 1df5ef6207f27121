#!/usr/bin/env python3
"""A/A calibration: how often relbench's significance tests call a
difference between two identical targets significant.

A statistical test earns its p-value on A/A pairs: with identical builds
and settings, a test at p < 0.05 should say "significant" in about 5% of
cells. This runs plans whose target is one configuration three times
(`copies = 3`: the target, `NAME-aa2` and `NAME-aa3`), reads each run's
report.json, and counts, per test, the cells of each copy against the
original that were tested, that were quiet (no disturbed window), and that
came out p < 0.05:

  within-run   one repeat, windows of --secs (at least 5 s): t on the log
               ratio with the seconds' variance plus the between-window
               variance of the run's other quiet A/A pairs (a copy's cell
               never tests itself; src/measure/within.rs, compare/aa.rs)
  seconds-only the same windows by the seconds alone (Welch's t,
               autocorrelation-corrected): the test relbench used before
               the between-window variance, computed here from the step
               files for comparison
  rank-sum     --repeats repeats of short windows: the exact rank-sum test
               over the repeats (src/measure/stats.rs)

With --adaptive it measures the adaptive run's rule instead
(`repeats = "auto"`, src/measure/sequential.rs): each plan has the base
`a` with `copies = 2` (the A/A windows the rule pools) and --aa identical
targets `b1`…`bN` that are not copies, so each of their cells is judged as
any target's would be, while the run adds repeats where a cell is open
(min 2, max --max). A false positive is a cell the report calls slower or
faster (its `verdict`); p < 0.05 alone (the adjusted p-value, any ratio)
is counted beside it.

Engines: embedded SQLite, and Debian's MariaDB as a managed server
(`--engines sqlite,mariadb`). Nothing else should run on the machine:
disturbed cells are left out and counted apart.

Usage: python3 bench/aa_calibration.py [--engines sqlite,mariadb]
       [--runs 5] [--secs 5] [--repeats 4] [--relbench PATH]
       python3 bench/aa_calibration.py --adaptive [--aa 4] [--max 6]
       [--runs 3] [--engines sqlite] [--relbench PATH]
"""

import argparse
import json
import math
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RELBENCH = ROOT / "target" / "release" / "relbench"

STEPS = ["point-query", "random-points-100", "range-covered-pk", "read-only-100",
         "update-index", "update-nonindex"]

TARGETS = {
    "sqlite": '[[target]]\nname = "a"\nengine = "sqlite"\ncopies = 3\n'
              '[target.pragmas]\njournal_mode = "wal"\nsynchronous = "normal"\n',
    "mariadb": '[[target]]\nname = "a"\nengine = "mariadb"\nbasedir = "/usr"\ncopies = 3\n',
}


def plan(engine, secs, repeats, seed):
    steps = ", ".join(f'"{s}"' for s in ["load", "settle"] + STEPS)
    window = f"{secs}s" if repeats == 1 else "500ms"
    return (
        f"steps = [{steps}]\nclients = [2]\nrepeats = {repeats}\nseed = {seed}\n"
        f"[scale]\nrows = 20000\n"
        f'[duration]\nwarmup = "200ms"\nread = "{window}"\nwrite = "{window}"\n'
        f'[settle]\nbase = "0s"\nper_million_rows = "0s"\nmax = "2s"\n'
        # The calibration counts disturbed windows apart; no retries, so
        # each run has the same cells.
        f"[interference]\nretries = 0\n"
        + TARGETS[engine]
    )


COPIES = ("a-aa2", "a-aa3")


def cells(report):
    """(tested, p<0.05, disturbed) over the copies' cells against `a`."""
    names = [t["name"] for t in report["targets"]]
    tested = significant = disturbed = 0
    for row in report["rows"]:
        if row.get("group") in ("load", None):
            continue
        for copy in COPIES:
            c = row["cells"][names.index(copy)]
            if c.get("disturbed") or c.get("base_disturbed"):
                disturbed += 1
                continue
            sig = c.get("significance")
            if not sig:
                continue
            tested += 1
            significant += sig["p_value"] < 0.05
    return tested, significant, disturbed


# The seconds-only test, for the "before" line: Welch's t on two windows'
# per-second throughput, each side's size corrected for lag-1
# autocorrelation (src/measure/within.rs, `seconds_only`).
def _beta_fraction(a, b, x):
    tiny = 1e-300
    c, d = 1.0, 1.0 - (a + b) * x / (a + 1.0)
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 301):
        m2 = 2 * m
        for aa in (m * (b - m) * x / ((a - 1 + m2) * (a + m2)),
                   -(a + m) * (a + b + m) * x / ((a + m2) * (a + 1 + m2))):
            d = 1.0 + aa * d
            d = 1.0 / (d if abs(d) > tiny else tiny)
            c = 1.0 + aa / c
            c = c if abs(c) > tiny else tiny
            h *= d * c
        if abs(d * c - 1.0) < 1e-15:
            break
    return h


def t_two_sided_p(t, df):
    """P(|T| >= t) for Student's t: the regularised incomplete beta."""
    x = df / (df + t * t)
    if x >= 1.0:
        return 1.0
    if x <= 0.0:
        return 0.0
    a, b = df / 2.0, 0.5
    front = math.exp(math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b)
                     + a * math.log(x) + b * math.log(1.0 - x))
    if x < (a + 1.0) / (a + b + 2.0):
        return front * _beta_fraction(a, b, x) / a
    return 1.0 - front * _beta_fraction(b, a, 1.0 - x) / b


def describe(x):
    n = len(x)
    m = sum(x) / n
    ss = sum((v - m) ** 2 for v in x)
    lag = sum((x[i] - m) * (x[i + 1] - m) for i in range(n - 1))
    r1 = min(max(lag / ss, 0.0), 0.99) if ss > 0 else 0.0
    return m, ss / (n - 1), max(n * (1 - r1) / (1 + r1), 2.0)


def seconds_only(out):
    """(tested, p<0.05) by the seconds alone over the quiet copies' cells."""
    tested = significant = 0
    for orig in sorted((out / "steps" / "a").glob("*.json")):
        if "-load-" in orig.name or "-settle-" in orig.name:
            continue
        a = json.loads(orig.read_text())
        for copy in COPIES:
            f = out / "steps" / copy / orig.name
            if not f.exists():
                continue
            b = json.loads(f.read_text())
            if any(s.get("failed") or (s["metrics"].get("interference") or {}).get("disturbed")
                   for s in (a, b)):
                continue
            x, y = b["per_second"][:int(b["secs"])], a["per_second"][:int(a["secs"])]
            if len(x) < 5 or len(y) < 5:
                continue
            (ma, va, na), (mb, vb, nb) = describe(x), describe(y)
            sa, sb = va / na, vb / nb
            if sa + sb <= 0:
                continue
            df = (sa + sb) ** 2 / (sa * sa / (na - 1) + sb * sb / (nb - 1))
            tested += 1
            significant += t_two_sided_p(abs(ma - mb) / math.sqrt(sa + sb), df) < 0.05
    return tested, significant


def adaptive_plan(engine, n_aa, max_repeats, seed):
    steps = ", ".join(f'"{s}"' for s in ["load", "settle"] + STEPS)
    base = TARGETS[engine].replace("copies = 3", "copies = 2")
    others = "".join(
        base.replace('name = "a"', f'name = "b{i}"').replace("copies = 2\n", "")
        for i in range(1, n_aa + 1)
    )
    return (
        f'steps = [{steps}]\nclients = [2]\nrepeats = "auto"\nseed = {seed}\n'
        f"[adaptive]\nmin = 2\nmax = {max_repeats}\n"
        f"[scale]\nrows = 20000\n"
        f'[duration]\nwarmup = "200ms"\nread = "1s"\nwrite = "1s"\n'
        f'[settle]\nbase = "0s"\nper_million_rows = "0s"\nmax = "2s"\n'
        f"[interference]\nretries = 0\n" + base + others
    )


def adaptive_cells(report):
    """(judged cells, false verdicts, p<0.05, disturbed or not judged,
    repeats per cell) over the b targets' cells against `a`."""
    names = [t["name"] for t in report["targets"]]
    judged = false = sig = other = 0
    repeats = []
    for row in report["rows"]:
        if row.get("group") in ("load", None):
            continue
        for i, name in enumerate(names):
            if not name.startswith("b"):
                continue
            c = row["cells"][i]
            v = c.get("verdict")
            if v in ("worse", "better", "same", "noise", "unsure"):
                judged += 1
                false += v in ("worse", "better")
                sig += (c.get("significance") or {}).get("p_value", 1.0) < 0.05
                repeats.append(c.get("repeats", 0))
            else:
                other += 1
    return judged, false, sig, other, repeats


def adaptive_main(args):
    tmp = Path(tempfile.mkdtemp(prefix="relbench-aa-adaptive-"))
    tmp.chmod(0o755)
    total = [0, 0, 0, 0]
    all_repeats = []
    for engine in args.engines.split(","):
        for run in range(args.runs):
            p = tmp / f"{engine}-{run}.toml"
            p.write_text(adaptive_plan(engine, args.aa, args.max, 2000 + run))
            out = tmp / f"{engine}-{run}"
            r = subprocess.run([args.relbench, "run", "-q", str(p), "--out", str(out)],
                               capture_output=True, text=True)
            if r.returncode not in (0, 3):
                sys.exit(f"{engine} adaptive run {run} failed:\n{r.stderr}")
            j, f, s, o, reps = adaptive_cells(json.loads((out / "report.json").read_text()))
            rounds = json.loads((out / "adaptive.json").read_text())
            for k, v in enumerate((j, f, s, o)):
                total[k] += v
            all_repeats += reps
            print(f"{engine:8} adaptive run {run + 1}: {f} of {j} judged A/A cells slower or faster, "
                  f"{s} at adjusted p < 0.05, {o} not judged; {len(rounds['rounds'])} round(s), "
                  f"{rounds.get('ended', {}).get('why')}", file=sys.stderr)
    j, f, s, o = total
    print("\nAdaptive rule on A/A cells (identical targets, judged as any target):")
    print(f"  judged cells {j}, called slower or faster {f} ({100 * f / max(j, 1):.1f}%), "
          f"adjusted p < 0.05 {s} ({100 * s / max(j, 1):.1f}%), not judged {o}")
    if all_repeats:
        print(f"  repeats per judged cell: median {sorted(all_repeats)[len(all_repeats) // 2]}, "
              f"max {max(all_repeats)}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--adaptive", action="store_true")
    ap.add_argument("--aa", type=int, default=4)
    ap.add_argument("--max", type=int, default=6)
    ap.add_argument("--engines", default="sqlite,mariadb")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--secs", type=int, default=5)
    ap.add_argument("--repeats", type=int, default=4)
    ap.add_argument("--relbench", default=str(RELBENCH))
    args = ap.parse_args()
    if args.relbench == str(RELBENCH):
        subprocess.run(["cargo", "build", "--release", "-q"], cwd=ROOT, check=True)
    if args.adaptive:
        return adaptive_main(args)
    tmp = Path(tempfile.mkdtemp(prefix="relbench-aa-"))
    # A managed server runs as its own OS user, which must reach its datadir.
    tmp.chmod(0o755)
    totals = {}
    before = {}
    for engine in args.engines.split(","):
        for test, repeats in [("within-run", 1), ("rank-sum", args.repeats)]:
            t = s = d = 0
            for run in range(args.runs):
                p = tmp / f"{engine}-{test}-{run}.toml"
                p.write_text(plan(engine, args.secs, repeats, 1000 + run))
                out = tmp / f"{engine}-{test}-{run}"
                r = subprocess.run([args.relbench, "run", "-q", str(p), "--out", str(out)],
                                   capture_output=True, text=True)
                if r.returncode not in (0, 3):
                    sys.exit(f"{engine} {test} run {run} failed:\n{r.stderr}")
                report = json.loads((out / "report.json").read_text())
                ti, si, di = cells(report)
                if ti + di == 0:
                    problems = "; ".join(p["message"] for p in report.get("problems", []))
                    sys.exit(f"{engine} {test} run {run}: no cell to count ({problems or r.stderr})")
                t, s, d = t + ti, s + si, d + di
                if test == "within-run":
                    bt, bs = seconds_only(out)
                    pt, ps = before.get(engine, (0, 0))
                    before[engine] = (pt + bt, ps + bs)
                print(f"{engine:8} {test:10} run {run + 1}: {si} of {ti} tested cells p < 0.05"
                      f" ({di} disturbed, left out)", file=sys.stderr)
            totals[(engine, test)] = (t, s, d)
    print("\nA/A pairs (a target against its own copy), cells at p < 0.05:")
    print(f"  {'engine':8} {'test':12} {'tested':>7} {'p<0.05':>7} {'rate':>7} {'disturbed':>10}")
    for engine, (t, s) in before.items():
        totals[(engine, "seconds-only")] = (t, s, None)
    for (engine, test), (t, s, d) in sorted(totals.items()):
        rate = f"{100 * s / t:.1f}%" if t else "—"
        print(f"  {engine:8} {test:12} {t:7} {s:7} {rate:>7} {'' if d is None else d:>10}")
    for test in ("within-run", "seconds-only", "rank-sum"):
        t = sum(v[0] for (e, x), v in totals.items() if x == test)
        s = sum(v[1] for (e, x), v in totals.items() if x == test)
        if t:
            print(f"  {'all':8} {test:12} {t:7} {s:7} {100 * s / t:6.1f}%")


if __name__ == "__main__":
    main()
