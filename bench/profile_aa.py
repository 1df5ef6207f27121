#!/usr/bin/env python3
"""A/A pairs for the profiles' differences: how many functions and wait
sites a report names as changed between two identical targets.

A function's change in share is a difference of two counts; a profile
compares hundreds of functions at once, so a test that is right 95% of the
time per function still names several by chance in every pair. This runs a
plan whose target is one configuration twice (`copies = 2`: the target and
`NAME-aa2`, profiled in the separate repeat) and counts, per run and step,
the functions the report marks past sampling noise (`beyond_noise`), and
those it would name in a sentence (past noise and material: what
`compare::profile::named_changes` keeps) — which should be none.

Engines: embedded SQLite, and Debian's MariaDB as a managed server
(`--engines sqlite,mariadb`). Nothing else should run on the machine.

Usage: python3 bench/profile_aa.py [--engines sqlite,mariadb] [--runs 3]
       [--secs 3] [--relbench PATH]
"""

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RELBENCH = ROOT / "target" / "release" / "relbench"

STEPS = ["point-query", "random-points-100", "read-only-100", "update-index"]

TARGETS = {
    "sqlite": '[[target]]\nname = "a"\nengine = "sqlite"\ncopies = 2\n'
              '[target.pragmas]\njournal_mode = "wal"\nsynchronous = "normal"\n',
    "mariadb": '[[target]]\nname = "a"\nengine = "mariadb"\nbasedir = "/usr"\ncopies = 2\n',
}


def plan(engine, secs, seed):
    steps = ", ".join(f'"{s}"' for s in ["load"] + STEPS)
    return (
        f"steps = [{steps}]\nclients = [2]\nseed = {seed}\n[scale]\nrows = 20000\n"
        f'[duration]\nwarmup = "300ms"\nread = "{secs}s"\nwrite = "{secs}s"\n'
        f"[profile]\n" + TARGETS[engine]
    )


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--engines", default="sqlite,mariadb")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--secs", type=int, default=3)
    ap.add_argument("--relbench", default=str(RELBENCH))
    a = ap.parse_args()
    if a.relbench == str(RELBENCH):
        subprocess.run(["cargo", "build", "--release", "-q"], cwd=ROOT, check=True)
    total = {"compared": 0, "beyond": 0, "named": 0, "cells": 0}
    with tempfile.TemporaryDirectory() as work:
        for engine in a.engines.split(","):
            for run in range(a.runs):
                d = Path(work) / f"{engine}-{run}"
                d.mkdir()
                (d / "plan.toml").write_text(plan(engine, a.secs, run + 1))
                subprocess.run([a.relbench, "run", "-q", str(d / "plan.toml"), "--out", str(d / "out")],
                               check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                r = json.load(open(d / "out" / "report.json"))
                ti = [t["name"] for t in r["targets"]].index("a-aa2")
                for row in r["rows"]:
                    p = row["cells"][ti].get("profile")
                    if not p:
                        continue
                    diffs = p.get("cpu_diff", []) + p.get("wait_diff", [])
                    beyond = [x for x in diffs if x["beyond_noise"]]
                    named = [x for x in beyond if x["material"]]
                    total["cells"] += 1
                    total["compared"] += len(diffs)
                    total["beyond"] += len(beyond)
                    total["named"] += len(named)
                    step = row["step"]["kind"].get("workload", "?")
                    print(f"{engine} run {run + 1} {step:18} samples {p['samples']:6}: "
                          f"{len(beyond)} past noise, {len(named)} named"
                          + (": " + ", ".join(f"{x['name']} {x['delta_us']:+.3f}" for x in named)
                             if named else ""))
    print(f"A/A: {total['cells']} cells, {total['compared']} top changes compared, "
          f"{total['beyond']} past noise, {total['named']} named")
    return 0 if total["named"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
