#!/usr/bin/env python3
"""Power: how often relbench's verdict calls a real change a change.

Runs one SQLite study --runs times: a base and a target that differ by
one setting whose effect was measured beforehand, on one step, with
--repeats repeats of --secs windows, and counts the runs whose cell came
out *changed* in the change's direction, *the same*, or *undecided*
(report.json's `verdict`). The bar (the verdicts issue): a 2× change is
changed at 2 repeats; a real 5% change in at least 80% of 10 runs at 6
repeats.

    python3 bench/power.py --step point-query --target journal_mode=wal,synchronous=normal \
        --repeats 2 --runs 10
    python3 bench/power.py --step point-query --target cache_size=50 --repeats 6 --runs 10

Usage: python3 bench/power.py --step STEP --target K=V[,K=V] [--base K=V,...]
       [--repeats 6] [--runs 10] [--secs 1] [--rows 20000] [--relbench PATH]
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


def pragmas(spec):
    out = {"journal_mode": "delete", "synchronous": "full"}
    for kv in filter(None, spec.split(",")):
        k, v = kv.split("=", 1)
        out[k] = v
    return "".join(f'{k} = "{v}"\n' for k, v in out.items())


def plan(args, seed):
    return (
        f'steps = ["load", "{args.step}"]\nclients = [1]\nrepeats = {args.repeats}\nseed = {seed}\n'
        f"[scale]\nrows = {args.rows}\n"
        f'[duration]\nwarmup = "200ms"\nread = "{args.secs}s"\nwrite = "{args.secs}s"\n'
        f'[[target]]\nname = "base"\nengine = "sqlite"\n[target.pragmas]\n{pragmas(args.base)}'
        f'[[target]]\nname = "target"\nengine = "sqlite"\n[target.pragmas]\n{pragmas(args.target)}'
    )


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--step", required=True)
    ap.add_argument("--target", required=True)
    ap.add_argument("--base", default="")
    ap.add_argument("--repeats", type=int, default=6)
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--secs", type=float, default=1.0)
    ap.add_argument("--rows", type=int, default=20000)
    ap.add_argument("--relbench", default=str(RELBENCH))
    args = ap.parse_args()
    if args.relbench == str(RELBENCH):
        subprocess.run(["cargo", "build", "--release", "-q"], cwd=ROOT, check=True)
    tmp = Path(tempfile.mkdtemp(prefix="relbench-power-"))
    counts = {"changed": 0, "same": 0, "undecided": 0, "wrong way": 0}
    ratios = []
    for run in range(args.runs):
        p = tmp / f"{run}.toml"
        p.write_text(plan(args, 3000 + run))
        out = tmp / f"{run}"
        r = subprocess.run([args.relbench, "run", "-q", str(p), "--out", str(out)],
                           capture_output=True, text=True)
        if r.returncode not in (0, 3):
            sys.exit(f"run {run} failed:\n{r.stderr}")
        report = json.loads((out / "report.json").read_text())
        row = next(x for x in report["rows"] if x["step"].get("kind", {}).get("workload") == args.step)
        c = row["cells"][1]
        v, rel = c.get("verdict"), c.get("relative")
        iv = (c.get("significance") or {}).get("interval") or {}
        ratios.append(rel)
        kind = {"worse": "changed", "better": "changed", "same": "same"}.get(v, "undecided")
        counts[kind] += 1
        print(f"run {run + 1:2}: {v:10} {rel:.3f} ({iv.get('lo', float('nan')):.3f}–"
              f"{iv.get('hi', float('nan')):.3f})", file=sys.stderr)
    gm = math.exp(sum(math.log(x) for x in ratios) / len(ratios))
    print(f"{args.step}, target {args.target} against {args.base or 'the default'}: "
          f"{args.repeats} repeats of {args.secs:g} s, {args.runs} runs; ratio (geometric mean) {gm:.3f}")
    print(f"  changed {counts['changed']}/{args.runs}, the same {counts['same']}, "
          f"undecided {counts['undecided']}")


if __name__ == "__main__":
    main()
