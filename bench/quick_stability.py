#!/usr/bin/env python3
"""The README's first command, run again and again: does it tell the same story?

Runs `relbench run` (the built-in quick plan) --runs times, each in a
directory of its own, and prints every step's verdict and ratio per run
(report.json's `verdict` and `relative`), then the steps whose verdict
was not the same in every run. The bar (the verdicts issue): five runs on
a quiet VM, the same verdict for every step each time. The machine's load
before each run is printed beside it: a run beside other work is said.

    python3 bench/quick_stability.py --runs 5

Usage: python3 bench/quick_stability.py [--runs 5] [--relbench PATH]
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RELBENCH = ROOT / "target" / "release" / "relbench"
WORDS = {"better": "faster", "worse": "slower", "same": "same"}


def step_name(row):
    s = row["step"]
    kind = s.get("kind", {})
    return kind.get("workload") or kind.get("kind") or json.dumps(kind)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--relbench", default=str(RELBENCH))
    args = ap.parse_args()
    if args.relbench == str(RELBENCH):
        subprocess.run(["cargo", "build", "--release", "-q"], cwd=ROOT, check=True)
    tmp = Path(tempfile.mkdtemp(prefix="relbench-quick-"))
    table = {}  # step -> [(verdict, ratio)] per run
    for run in range(args.runs):
        load = os.getloadavg()[0]
        out = tmp / str(run)
        t0 = time.monotonic()
        r = subprocess.run([args.relbench, "run", "-q", "--out", str(out)],
                           capture_output=True, text=True)
        secs = time.monotonic() - t0
        if r.returncode not in (0, 3):
            sys.exit(f"run {run} failed ({r.returncode}):\n{r.stderr}")
        report = json.loads((out / "report.json").read_text())
        print(f"run {run + 1}: {secs:.0f} s, load before {load:.2f}", flush=True)
        for row in report["rows"]:
            c = row["cells"][1]
            v = c.get("verdict")
            if v is None:
                continue
            table.setdefault(step_name(row), []).append((WORDS.get(v, v), c.get("relative")))
    print()
    print(f"{'step':<20} " + "  ".join(f"run {i + 1:<10}" for i in range(args.runs)))
    unstable = []
    for step, cells in table.items():
        line = "  ".join(f"{v:<8} {r:5.2f}" if r else f"{v:<14}" for v, r in cells)
        print(f"{step:<20} {line}")
        if len({v for v, _ in cells}) > 1 or len(cells) != args.runs:
            unstable.append(step)
    print()
    print(f"steps whose verdict differed between runs: {len(unstable)} of {len(table)}"
          + (f" ({', '.join(unstable)})" if unstable else ""))
    print(f"kept: {tmp}")


if __name__ == "__main__":
    main()
