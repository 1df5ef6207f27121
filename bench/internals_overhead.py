#!/usr/bin/env python3
"""What reading the engine's own accounting costs a measured window: the
same plan run with and without it, in alternating rounds; throughput and
the server's CPU per operation of each step, and the ratios on ÷ off.

- MariaDB (Debian's, managed): `[internals] performance_schema = true`
  (performance_schema on, its default instruments; relbench reads its
  totals at the window's edges) against `--performance-schema=OFF`; and
  with `--instruments "wait/%"` every wait instrument on as well.
- PostgreSQL (Debian's 15, managed): `wait_event` sampled every
  `--sampling` (100ms, the default) against `wait_sampling = "off"`.

Nothing else should run on the machine.

Usage: python3 bench/internals_overhead.py [--engines mariadb,postgres]
       [--rounds 3] [--secs 5] [--instruments "wait/%"] [--sampling 100ms]
       [--relbench PATH]
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
    "mariadb": '[[target]]\nname = "a"\nengine = "mariadb"\nbasedir = "/usr"\n',
    "postgres": '[[target]]\nname = "a"\nengine = "postgres"\nbasedir = "/usr/lib/postgresql/15"\n',
}


SAMPLING = "100ms"


def internals(engine, on, instruments):
    if engine == "mariadb":
        if not on:
            return "[internals]\nperformance_schema = false\n"
        extra = f'instruments = ["{instruments}"]\n' if instruments else ""
        return "[internals]\nperformance_schema = true\n" + extra
    return f'[internals]\nwait_sampling = "{SAMPLING if on else "off"}"\n'


def plan(engine, secs, on, instruments):
    steps = ", ".join(f'"{s}"' for s in ["load"] + STEPS)
    return (
        f"steps = [{steps}]\nclients = [2]\nseed = 1\n[scale]\nrows = 20000\n"
        f'[duration]\nwarmup = "500ms"\nread = "{secs}s"\nwrite = "{secs}s"\n'
        + internals(engine, on, instruments)
        + TARGETS[engine]
    )


def measure(relbench, engine, secs, on, instruments, work, tag):
    d = Path(work) / tag
    d.mkdir(parents=True, exist_ok=True)
    (d / "plan.toml").write_text(plan(engine, secs, on, instruments))
    subprocess.run([relbench, "run", "-q", str(d / "plan.toml"), "--out", str(d / "out")],
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    out = {}
    for step in STEPS:
        f = glob.glob(str(d / "out" / "steps" / "a" / f"r1-*-{step}-c2.json"))[0]
        s = json.load(open(f))
        m = s["metrics"]
        waits = (m.get("waits") or {}).get("total_us")
        out[step] = (s["throughput"], m.get("server_cpu_us_per_op"), waits)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--engines", default="mariadb,postgres")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--secs", type=int, default=5)
    ap.add_argument("--instruments", default="")
    ap.add_argument("--sampling", default=SAMPLING)
    ap.add_argument("--relbench", default=str(RELBENCH))
    a = ap.parse_args()
    globals()["SAMPLING"] = a.sampling
    if a.relbench == str(RELBENCH):
        subprocess.run(["cargo", "build", "--release", "-q"], cwd=ROOT, check=True)
    with tempfile.TemporaryDirectory() as work:
        for engine in a.engines.split(","):
            rows = {s: {"off": [], "on": []} for s in STEPS}
            for r in range(a.rounds):
                # Alternate which goes first, so a drift of the machine
                # falls on both.
                order = ["off", "on"] if r % 2 == 0 else ["on", "off"]
                for tag in order:
                    got = measure(a.relbench, engine, a.secs, tag == "on", a.instruments,
                                  work, f"{engine}-{r}-{tag}")
                    for s, v in got.items():
                        rows[s][tag].append(v)
            what = {"mariadb": f"performance_schema on{' + ' + a.instruments if a.instruments else ''}",
                    "postgres": f"wait_event sampled every {a.sampling}"}[engine]
            print(f"{engine}: {what}; {a.rounds} rounds of {a.secs} s windows, 2 clients")
            print(f"  {'step':14} {'off ops/s':>10} {'on':>10} {'ratio':>6}  "
                  f"{'off server CPU/op':>17} {'on':>8} {'ratio':>6}  waits µs/op")
            for s in STEPS:
                off, on = rows[s]["off"], rows[s]["on"]
                t0, t1 = statistics.median(v[0] for v in off), statistics.median(v[0] for v in on)
                c0 = statistics.median(v[1] for v in off if v[1])
                c1 = statistics.median(v[1] for v in on if v[1])
                w = [v[2] for v in on if v[2] is not None]
                print(f"  {s:14} {t0:10.0f} {t1:10.0f} {t1 / t0:6.3f}  {c0:17.2f} {c1:8.2f} {c1 / c0:6.3f}  "
                      f"{statistics.median(w) if w else float('nan'):.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
