#!/usr/bin/env python3
"""How often `relbench run --gate` passes an identical candidate.

The gate's bar (issue 65): an identical candidate exits 0 in at least 19
of 20 runs on this VM. Each run is one plan of two identical targets
(embedded SQLite in WAL mode, or Debian's MariaDB as managed servers),
the steps below at their default allowance of 5%, `--repeats` rounds of
`--secs` windows; the script counts the exit codes (0 passed, 1 a
regression, 3 a failed step, 4 undecided) and, for the runs that did not
pass, what the gate said of the steps that held them.

Usage: python3 bench/gate_aa.py [--engine sqlite|mariadb] [--runs 20]
       [--repeats 3] [--auto MAX] [--secs 1] [--relbench PATH] [--keep DIR]
"""

import argparse
import collections
import json
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RELBENCH = ROOT / "target" / "release" / "relbench"

STEPS = ["load", "point-query", "range-covered-pk", "update-index"]

TARGET = {
    "sqlite": 'engine = "sqlite"\n[target.pragmas]\njournal_mode = "wal"\nsynchronous = "normal"\n',
    "mariadb": 'engine = "mariadb"\nbasedir = "/usr"\n',
}


def plan(engine, repeats, secs, seed, most):
    steps = ", ".join(f'"{s}"' for s in STEPS)
    rounds = f'"auto"\n[adaptive]\nmin = {repeats}\nmax = {most}' if most else repeats
    text = (
        f"steps = [{steps}]\nclients = [1]\nseed = {seed}\nrepeats = {rounds}\n"
        f"[scale]\nrows = 10000\n"
        f'[duration]\nwarmup = "200ms"\nread = "{secs}s"\nwrite = "{secs}s"\n'
    )
    for name in ("reference", "candidate"):
        text += f'\n[[target]]\nname = "{name}"\n' + TARGET[engine]
    return text


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--engine", default="sqlite", choices=sorted(TARGET))
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--secs", type=float, default=1.0)
    ap.add_argument("--auto", type=int, metavar="MAX",
                    help='repeats = "auto" from --repeats up to MAX rounds, as a CI gate would run')
    ap.add_argument("--relbench", default=str(RELBENCH))
    ap.add_argument("--keep", help="keep the runs here")
    args = ap.parse_args()
    if args.relbench == str(RELBENCH):
        subprocess.run(["cargo", "build", "--release", "-q"], cwd=ROOT, check=True)
    tmp = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="relbench-gate-"))
    tmp.mkdir(parents=True, exist_ok=True)
    tmp.chmod(0o755)
    codes = collections.Counter()
    held = []
    for run in range(args.runs):
        p = tmp / f"{run}.toml"
        p.write_text(plan(args.engine, args.repeats, args.secs, 2000 + run, args.auto))
        out = tmp / f"{run}"
        r = subprocess.run([args.relbench, "run", "-q", str(p), "--gate", "--out", str(out)],
                           capture_output=True, text=True)
        codes[r.returncode] += 1
        gate = out / "gate.json"
        if not gate.exists():
            sys.exit(f"run {run} wrote no gate.json (exit {r.returncode}):\n{r.stderr}")
        j = json.loads(gate.read_text())
        for c in j["cases"]:
            if c["answer"] != "pass":
                held.append(f"run {run + 1} exit {r.returncode}: {c['step']} c{c['clients']} {c['answer']}: {c['why']}")
        print(f"run {run + 1}: exit {r.returncode}", file=sys.stderr)
    rounds = f"{args.repeats} to {args.auto} rounds (adaptive)" if args.auto else f"{args.repeats} rounds"
    print(f"{args.engine}, identical candidate, {args.runs} runs of {rounds} x {args.secs} s windows "
          f"({', '.join(s for s in STEPS if s != 'load')}):")
    print("  exit codes: " + ", ".join(f"{k}: {v}" for k, v in sorted(codes.items())))
    print(f"  passed {codes[0]} of {args.runs} (the bar: 19); regressions {codes[1]} (should be 0)")
    for h in held:
        print("  " + h)


if __name__ == "__main__":
    main()
