#!/usr/bin/env python3
"""A/A calibration: how often relbench's significance tests call a
difference between two identical targets significant.

A statistical test earns its p-value on A/A pairs: with identical builds
and settings, a test at p < 0.05 should say "significant" in about 5% of
cells. This runs plans whose targets are one configuration twice
(`copies = 2`: the target and `NAME-aa2`, interleaved), reads each run's
report.json, and counts, per test, the cells of the copy against its
original that were tested, that were quiet (no disturbed window), and that
came out p < 0.05:

  within-run   one repeat, windows of --secs (at least 5 s, the within-run
               test's minimum): Welch's t on the two windows' per-second
               throughput, autocorrelation-corrected (src/measure/within.rs)
  rank-sum     --repeats repeats of short windows: the exact rank-sum test
               over the repeats (src/measure/stats.rs)

Engines: embedded SQLite, and Debian's MariaDB as a managed server
(`--engines sqlite,mariadb`). Nothing else should run on the machine:
disturbed cells are left out and counted apart.

Usage: python3 bench/aa_calibration.py [--engines sqlite,mariadb]
       [--runs 5] [--secs 5] [--repeats 4] [--relbench PATH]
"""

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RELBENCH = ROOT / "target" / "release" / "relbench"

STEPS = ["point-query", "random-points-100", "range-covered-pk", "read-only-100",
         "update-index", "update-nonindex"]

TARGETS = {
    "sqlite": '[[target]]\nname = "a"\nengine = "sqlite"\ncopies = 2\n'
              '[target.pragmas]\njournal_mode = "wal"\nsynchronous = "normal"\n',
    "mariadb": '[[target]]\nname = "a"\nengine = "mariadb"\nbasedir = "/usr"\ncopies = 2\n',
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


def cells(report):
    """(tested, p<0.05, disturbed) over the copy's cells against `a`."""
    names = [t["name"] for t in report["targets"]]
    copy = names.index("a-aa2")
    tested = significant = disturbed = 0
    for row in report["rows"]:
        if row.get("group") in ("load", None):
            continue
        c = row["cells"][copy]
        if c.get("disturbed") or c.get("base_disturbed"):
            disturbed += 1
            continue
        sig = c.get("significance")
        if not sig:
            continue
        tested += 1
        significant += sig["p_value"] < 0.05
    return tested, significant, disturbed


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--engines", default="sqlite,mariadb")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--secs", type=int, default=5)
    ap.add_argument("--repeats", type=int, default=4)
    ap.add_argument("--relbench", default=str(RELBENCH))
    args = ap.parse_args()
    if args.relbench == str(RELBENCH):
        subprocess.run(["cargo", "build", "--release", "-q"], cwd=ROOT, check=True)
    tmp = Path(tempfile.mkdtemp(prefix="relbench-aa-"))
    # A managed server runs as its own OS user, which must reach its datadir.
    tmp.chmod(0o755)
    totals = {}
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
                print(f"{engine:8} {test:10} run {run + 1}: {si} of {ti} tested cells p < 0.05"
                      f" ({di} disturbed, left out)", file=sys.stderr)
            totals[(engine, test)] = (t, s, d)
    print("\nA/A pairs (a target against its own copy), cells at p < 0.05:")
    print(f"  {'engine':8} {'test':10} {'tested':>7} {'p<0.05':>7} {'rate':>7} {'disturbed':>10}")
    for (engine, test), (t, s, d) in totals.items():
        rate = f"{100 * s / t:.1f}%" if t else "—"
        print(f"  {engine:8} {test:10} {t:7} {s:7} {rate:>7} {d:10}")
    for test in ("within-run", "rank-sum"):
        t = sum(v[0] for (e, x), v in totals.items() if x == test)
        s = sum(v[1] for (e, x), v in totals.items() if x == test)
        if t:
            print(f"  {'all':8} {test:10} {t:7} {s:7} {100 * s / t:6.1f}%")


if __name__ == "__main__":
    main()
