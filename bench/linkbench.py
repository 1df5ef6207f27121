#!/usr/bin/env python3
"""LinkBench: is the client what limits the load or the requests?

Runs `relbench run` on LinkBench (lb.load, settle, lb.request) against
managed MariaDB 10.11 with InnoDB and with MyRocks (the example configs),
and prints for each engine and round:

- the load of NODES nodes with their links (the measured out-degrees): rows
  a second (nodes, links and counts), nodes/s, links/s, and relbench's client
  CPU per inserted row against the server's;
- the requests at REQUESTERS requesters for SECS seconds: requests a second,
  client CPU per request, server CPU per request, and client ÷ server.

The bar: client CPU per request at most a quarter of the server's. Both
figures come from relbench's own sampler (getrusage for the client, the
server's /proc process tree) over the same window, so their ratio does not
depend on how busy the machine was.

Usage: python3 bench/linkbench.py [--nodes 1000000] [--requesters 2] [--secs 30] [--rounds 1]
"""

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RELBENCH = ROOT / "target" / "release" / "relbench"

TARGETS = {
    "innodb": 'config = "{root}/examples/configs/innodb.cnf"\n',
    "myrocks": 'config = "{root}/examples/configs/myrocks.cnf"\nstorage_engine = "ROCKSDB"\n',
}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--nodes", type=int, default=1_000_000)
    ap.add_argument("--requesters", type=int, default=2)
    ap.add_argument("--loaders", type=int, default=4)
    ap.add_argument("--secs", type=int, default=30)
    ap.add_argument("--rounds", type=int, default=1)
    a = ap.parse_args()
    subprocess.run(["cargo", "build", "--release", "-q"], cwd=ROOT, check=True)
    figures = {e: [] for e in TARGETS}
    for rnd in range(1, a.rounds + 1):
        for engine, extra in TARGETS.items():
            with tempfile.TemporaryDirectory() as d:
                Path(d).chmod(0o755)
                plan = Path(d) / "plan.toml"
                plan.write_text(
                    'steps = ["lb.load", "settle", "lb.request"]\nseed = 1\n'
                    f"[linkbench]\nmaxid1 = {a.nodes + 1}\nloaders = {a.loaders}\n"
                    f"requesters = {a.requesters}\n"
                    f'[duration]\nwarmup = "5s"\nwrite = "{a.secs}s"\n'
                    f'[[target]]\nname = "{engine}"\nengine = "mariadb"\nbasedir = "/usr"\n'
                    + extra.format(root=ROOT)
                )
                out = Path(d) / "out"
                run = subprocess.run(
                    [str(RELBENCH), "run", "-q", str(plan), "--out", str(out)],
                    capture_output=True,
                    text=True,
                )
                if run.returncode != 0:
                    sys.exit(f"relbench failed on {engine}:\n{run.stderr}")
                steps = out / "steps" / engine
                load = json.loads(next(steps.glob("r1-01-lb.load-*.json")).read_text())
                req = json.loads(next(steps.glob("r1-03-lb.request-*.json")).read_text())
                lm, rm = load["metrics"], req["metrics"]
                t = load["tallies"]
                row = (
                    load["throughput"],
                    t["load_node/rows"] / load["secs"],
                    t["load_link/rows"] / load["secs"],
                    lm["client_cpu_us_per_op"] / lm["server_cpu_us_per_op"],
                    req["throughput"],
                    rm["client_cpu_us_per_op"],
                    rm["server_cpu_us_per_op"],
                    rm["client_cpu_us_per_op"] / rm["server_cpu_us_per_op"],
                )
                figures[engine].append(row)
                print(
                    f"round {rnd} {engine:8} load {row[0]:>9,.0f} rows/s ({row[1]:,.0f} nodes/s, "
                    f"{row[2]:,.0f} links/s; client/server {row[3]:.3f})  requests {row[4]:>7,.0f}/s  "
                    f"client {row[5]:6.1f} µs/req  server {row[6]:6.1f} µs/req  client/server {row[7]:.3f}",
                    flush=True,
                )
    print(
        f"\nmedians over {a.rounds} round(s): {a.nodes:,} nodes, {a.loaders} loaders; "
        f"{a.requesters} requesters for {a.secs} s:"
    )
    ok = True
    for engine, rows in figures.items():
        med = [statistics.median(x[i] for x in rows) for i in range(8)]
        verdict = "ok" if med[7] <= 0.25 else "OVER the bar of 0.25"
        ok &= med[7] <= 0.25
        print(
            f"  {engine:8} load {med[0]:,.0f} rows/s ({med[1]:,.0f} nodes/s, {med[2]:,.0f} links/s), "
            f"client/server per row {med[3]:.3f}; requests {med[4]:,.0f}/s, client {med[5]:.1f} µs/req, "
            f"server {med[6]:.1f} µs/req: client/server {med[7]:.3f} ({verdict})"
        )
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
