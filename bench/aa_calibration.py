#!/usr/bin/env python3
"""A/A calibration: what relbench's verdicts say of identical targets.

A statistical test earns its p-value on A/A pairs: with identical builds
and settings, a test at p < 0.05 should call about 5% of cells
different. This runs plans whose target is one configuration three
times (`copies = 3`: the target, `NAME-aa2` and `NAME-aa3`), reads each
run's report.json, and counts the copies' cells against the original by
their verdict: *changed* (slower or faster: a false positive), *the
same* (equivalence shown: the interval inside ±5%), *undecided*, and
disturbed (left out). The bar (the verdicts issue): at most 5% changed
and at least 80% the same.

  verdicts     (the default) --repeats repeats of --secs windows: the
               paired test over the rounds, each cell's variance
               moderated by the study's other cells (src/measure/paired.rs)
  --within     one repeat, windows of --secs (at least 5 s): t on the log
               ratio with the seconds' variance plus the between-window
               variance of the run's other quiet A/A pairs (a copy's cell
               never tests itself; src/measure/within.rs, compare/aa.rs),
               and the seconds-only test beside it (Welch's t,
               autocorrelation-corrected), computed from the step files
  --adaptive   the adaptive run's rule (`repeats = "auto"`): the base `a`
               with `copies = 2` and --aa identical targets `b1`…`bN` that
               are not copies, so each of their cells is judged as any
               target's would be, while the run adds repeats where a cell
               is undecided (min 2, max --max)

Engines: embedded SQLite, Debian's MariaDB and PostgreSQL as managed
servers (`--engines sqlite,mariadb,postgres`). Nothing else should run on
the machine: disturbed cells are left out and counted apart.

Usage: python3 bench/aa_calibration.py [--engines sqlite,mariadb,postgres]
       [--runs 3] [--secs 2] [--repeats 4] [--restart] [--relbench PATH]
       python3 bench/aa_calibration.py --keep DIR --rejudge [--engines …] [--runs N]
       python3 bench/aa_calibration.py --within [--secs 5] [--runs 5]
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
    "postgres": '[[target]]\nname = "a"\nengine = "postgres"\nbasedir = "/usr/lib/postgresql/15"\ncopies = 3\n',
}


# With --restart, every round starts each copy's server again after its
# load: a server's level that lasts as long as its process (its memory's
# layout, what it allocated) then varies round to round, where the paired
# test sees it, instead of once per run.
RESTART = []


def plan(engine, secs, repeats, seed):
    steps = ", ".join(f'"{s}"' for s in ["load"] + RESTART + ["settle"] + STEPS)
    window = f"{secs}s"
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
    """(tested, p<0.05, disturbed, {answer: count}) over the copies' cells
    against `a`."""
    names = [t["name"] for t in report["targets"]]
    tested = significant = disturbed = 0
    answers = {"changed": 0, "same": 0, "undecided": 0}
    for row in report["rows"]:
        if row.get("group") in ("load", None):
            continue
        for copy in COPIES:
            c = row["cells"][names.index(copy)]
            if c.get("disturbed") or c.get("base_disturbed"):
                disturbed += 1
                continue
            v = c.get("verdict")
            answers["changed" if v in ("worse", "better") else "same" if v == "same" else "undecided"] += 1
            sig = c.get("significance")
            if not sig:
                continue
            tested += 1
            significant += sig["p_value"] < 0.05
    return tested, significant, disturbed, answers


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
            if v in ("worse", "better", "same", "undecided"):
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


def verdicts_main(args):
    """The verdicts' rates on A/A cells at --repeats repeats."""
    tmp = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="relbench-aa-"))
    tmp.mkdir(parents=True, exist_ok=True)
    # A managed server runs as its own OS user, which must reach its datadir.
    tmp.chmod(0o755)
    print(f"A/A cells (a target against its own copy), {args.repeats} repeats of {args.secs} s windows"
          f"{' (rejudged: the kept runs reported again by this relbench)' if args.rejudge else ''}:")
    print(f"  {'engine':8} {'cells':>6} {'changed':>8} {'same':>8} {'undecided':>10} {'p<0.05':>7} {'disturbed':>10}")
    grand = {"changed": 0, "same": 0, "undecided": 0}
    for engine in args.engines.split(","):
        tot = {"changed": 0, "same": 0, "undecided": 0}
        t = s = d = 0
        for run in range(args.runs):
            p = tmp / f"{engine}-{run}.toml"
            out = tmp / f"{engine}-{run}"
            if args.rejudge:
                # The windows as measured then, judged by this build.
                cmd = [args.relbench, "report", str(out), "--format", "json"]
            else:
                p.write_text(plan(engine, args.secs, args.repeats, 1000 + run))
                cmd = [args.relbench, "run", "-q", str(p), "--out", str(out)]
            r = subprocess.run(cmd, capture_output=True, text=True)
            if r.returncode not in (0, 3):
                sys.exit(f"{engine} run {run} failed:\n{r.stderr}")
            ti, si, di, ans = cells(json.loads((out / "report.json").read_text()))
            t, s, d = t + ti, s + si, d + di
            for k in tot:
                tot[k] += ans[k]
                grand[k] += ans[k]
            print(f"{engine:8} run {run + 1}: {ans} ({di} disturbed, left out)", file=sys.stderr)
        n = sum(tot.values())
        pct = lambda k: f"{100 * tot[k] / n:.1f}%" if n else "—"
        print(f"  {engine:8} {n:6} {pct('changed'):>8} {pct('same'):>8} {pct('undecided'):>10} "
              f"{s:7} {d:10}")
    n = sum(grand.values())
    if n:
        print(f"  {'all':8} {n:6} {100 * grand['changed'] / n:7.1f}% {100 * grand['same'] / n:7.1f}% "
              f"{100 * grand['undecided'] / n:9.1f}%")


def within_main(args):
    """One repeat: the per-second test against the seconds-only one."""
    tmp = Path(tempfile.mkdtemp(prefix="relbench-aa-"))
    tmp.chmod(0o755)
    totals = {}
    before = {}
    for engine in args.engines.split(","):
        t = s = d = 0
        for run in range(args.runs):
            p = tmp / f"{engine}-within-{run}.toml"
            p.write_text(plan(engine, max(args.secs, 5), 1, 1000 + run))
            out = tmp / f"{engine}-within-{run}"
            r = subprocess.run([args.relbench, "run", "-q", str(p), "--out", str(out)],
                               capture_output=True, text=True)
            if r.returncode not in (0, 3):
                sys.exit(f"{engine} within run {run} failed:\n{r.stderr}")
            report = json.loads((out / "report.json").read_text())
            ti, si, di, _ = cells(report)
            t, s, d = t + ti, s + si, d + di
            bt, bs = seconds_only(out)
            pt, ps = before.get(engine, (0, 0))
            before[engine] = (pt + bt, ps + bs)
            print(f"{engine:8} within-run run {run + 1}: {si} of {ti} tested cells p < 0.05"
                  f" ({di} disturbed, left out)", file=sys.stderr)
        totals[(engine, "within-run")] = (t, s, d)
    print("\nA/A pairs (a target against its own copy), one window a side, cells at p < 0.05:")
    print(f"  {'engine':8} {'test':12} {'tested':>7} {'p<0.05':>7} {'rate':>7} {'disturbed':>10}")
    for engine, (t, s) in before.items():
        totals[(engine, "seconds-only")] = (t, s, None)
    for (engine, test), (t, s, d) in sorted(totals.items()):
        rate = f"{100 * s / t:.1f}%" if t else "—"
        print(f"  {engine:8} {test:12} {t:7} {s:7} {rate:>7} {'' if d is None else d:>10}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--adaptive", action="store_true")
    ap.add_argument("--restart", action="store_true",
                    help="restart each copy's server after its load in every round (server engines)")
    ap.add_argument("--within", action="store_true")
    ap.add_argument("--aa", type=int, default=4)
    ap.add_argument("--max", type=int, default=6)
    ap.add_argument("--engines", default="sqlite,mariadb,postgres")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--secs", type=float, default=2)
    ap.add_argument("--repeats", type=int, default=4)
    ap.add_argument("--relbench", default=str(RELBENCH))
    ap.add_argument("--keep", help="the runs' directory (kept; default: a new temporary one)")
    ap.add_argument("--rejudge", action="store_true",
                    help="report the runs kept in --keep again with this relbench instead of running")
    args = ap.parse_args()
    if args.restart:
        RESTART.append("restart")
    if args.rejudge and not args.keep:
        sys.exit("--rejudge reads the runs kept in --keep DIR: name it")
    if args.relbench == str(RELBENCH):
        subprocess.run(["cargo", "build", "--release", "-q"], cwd=ROOT, check=True)
    if args.adaptive:
        return adaptive_main(args)
    if args.within:
        return within_main(args)
    return verdicts_main(args)


if __name__ == "__main__":
    main()
