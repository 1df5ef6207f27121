#!/usr/bin/env python3
"""What profiling a measured window costs: the same plan run with
`[profile] mode = "inline"` (the measured windows profiled) and without
profiles, in alternating rounds, side by side; throughput and CPU per
operation of each step, and the ratios inline ÷ off.

The default (`mode = "separate"`) never profiles a measured window, so
its measured figures are the "off" ones by construction; this measures
what `inline` bends, and at which rate (`--rate`).

Engines: embedded SQLite (relbench's client threads are profiled) and
Debian's MariaDB as a managed server (its process). Nothing else should
run on the machine.

Usage: python3 bench/profile_overhead.py [--engines sqlite,mariadb]
       [--rounds 3] [--secs 5] [--rate 499] [--relbench PATH]
"""

import argparse
import glob
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RELBENCH = ROOT / "target" / "release" / "relbench"

STEPS = ["point-query", "update-index"]

TARGETS = {
    "sqlite": '[[target]]\nname = "a"\nengine = "sqlite"\n'
              '[target.pragmas]\njournal_mode = "wal"\nsynchronous = "normal"\n',
    "mariadb": '[[target]]\nname = "a"\nengine = "mariadb"\nbasedir = "/usr"\n',
}


def plan(engine, secs, profile, _off_cpu):
    steps = ", ".join(f'"{s}"' for s in ["load"] + STEPS)
    text = (
        f"steps = [{steps}]\nclients = [2]\nseed = 1\n[scale]\nrows = 20000\n"
        f'[duration]\nwarmup = "500ms"\nread = "{secs}s"\nwrite = "{secs}s"\n'
    )
    if profile:
        # Inline profiles are on-CPU only (relbench refuses off-CPU ones
        # in a measured window; --off-cpu measures what they would cost
        # through a separate plan's profiled repeat, not here).
        text += f'[profile]\nmode = "inline"\nrate = {profile}\n'
    return text + TARGETS[engine]


def measure(relbench, engine, secs, profile, off_cpu, work, tag):
    d = Path(work) / tag
    d.mkdir(parents=True, exist_ok=True)
    (d / "plan.toml").write_text(plan(engine, secs, profile, off_cpu))
    subprocess.run([relbench, "run", "-q", str(d / "plan.toml"), "--out", str(d / "out")],
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    out = {}
    for step in STEPS:
        f = glob.glob(str(d / "out" / "steps" / "a" / f"r1-*-{step}-c2.json"))[0]
        s = json.load(open(f))
        m = s["metrics"]
        cpu = m.get("own_cpu_us_per_op") or m.get("client_cpu_us_per_op")
        prof = None
        recs = glob.glob(str(d / "out" / "profiles" / "a" / f"r1-*-{step}-c2.json"))
        if recs:
            meta = json.load(open(recs[0]))["meta"]
            if meta.get("profiler_cpu_secs") is not None and meta.get("secs"):
                prof = 100 * meta["profiler_cpu_secs"] / meta["secs"]
        out[step] = (s["throughput"], cpu, prof)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--engines", default="sqlite,mariadb")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--secs", type=int, default=5)
    ap.add_argument("--rate", type=int, default=499)
    ap.add_argument("--relbench", default=str(RELBENCH))
    a = ap.parse_args()
    if a.relbench == str(RELBENCH):
        subprocess.run(["cargo", "build", "--release", "-q"], cwd=ROOT, check=True)
    with tempfile.TemporaryDirectory() as work:
        for engine in a.engines.split(","):
            rows = {s: {"off": [], "inline": []} for s in STEPS}
            for r in range(a.rounds):
                # Alternate which goes first, so a drift of the machine
                # falls on both.
                order = [("off", None), ("inline", a.rate)]
                if r % 2:
                    order.reverse()
                for tag, profile in order:
                    got = measure(a.relbench, engine, a.secs, profile, False, work, f"{engine}-{r}-{tag}")
                    for s, v in got.items():
                        rows[s][tag].append(v)
            print(f"{engine}: {a.rounds} rounds of {a.secs} s windows, 2 clients, inline at {a.rate} Hz, on CPU")
            print(f"  {'step':14} {'off ops/s':>10} {'inline':>10} {'ratio':>6}  "
                  f"{'off CPU/op':>10} {'inline':>8} {'ratio':>6}  profiler CPU (% of a core)")
            for s in STEPS:
                off, inl = rows[s]["off"], rows[s]["inline"]
                t0, t1 = statistics.median(v[0] for v in off), statistics.median(v[0] for v in inl)
                c0 = statistics.median(v[1] for v in off if v[1])
                c1 = statistics.median(v[1] for v in inl if v[1])
                p = [v[2] for v in inl if v[2] is not None]
                print(f"  {s:14} {t0:10.0f} {t1:10.0f} {t1 / t0:6.3f}  {c0:10.2f} {c1:8.2f} {c1 / c0:6.3f}  "
                      f"{statistics.median(p) if p else float('nan'):.1f}%")
    return 0


if __name__ == "__main__":
    sys.exit(main())
