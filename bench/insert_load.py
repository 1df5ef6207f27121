#!/usr/bin/env python3
"""Insert Benchmark l.i0: is the client what limits the load?

Runs `relbench run` on a plan of l.i0 (and l.x) alone against managed
MariaDB 10.11 (InnoDB) and PostgreSQL 15, with the example configs, and
prints for each engine and round: l.i0's rows/s, relbench's client CPU per
inserted row, the server's CPU per row (its processes, live and reaped), and
client ÷ server. The bar: client CPU per row at most a quarter of the
server's.

Both figures come from relbench's own sampler (getrusage for the client, the
server's /proc process tree), over the same window, so their ratio does not
depend on how busy the machine was.

Usage: python3 bench/insert_load.py [--rows 300000] [--clients 2] [--rounds 3]
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
    "mariadb": """
[[target]]
name = "innodb"
engine = "mariadb"
basedir = "/usr"
config = "{root}/examples/configs/innodb.cnf"
""",
    "postgres": """
[[target]]
name = "pg"
engine = "postgres"
basedir = "/usr/lib/postgresql/15"
config = "{root}/examples/configs/pg15.conf"
""",
}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=300_000)
    ap.add_argument("--clients", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=3)
    a = ap.parse_args()
    subprocess.run(["cargo", "build", "--release", "-q"], cwd=ROOT, check=True)
    figures = {e: [] for e in TARGETS}
    for rnd in range(1, a.rounds + 1):
        for engine, target in TARGETS.items():
            with tempfile.TemporaryDirectory() as d:
                Path(d).chmod(0o755)  # PostgreSQL runs as another user
                plan = Path(d) / "plan.toml"
                plan.write_text(
                    f'steps = ["l.i0", "l.x"]\nclients = [{a.clients}]\n'
                    f"[scale]\nrows = {a.rows}\n" + target.format(root=ROOT)
                )
                out = Path(d) / "out"
                run = subprocess.run(
                    [str(RELBENCH), "run", "-q", str(plan), "--out", str(out)],
                    capture_output=True,
                    text=True,
                )
                if run.returncode != 0:
                    sys.exit(f"relbench failed on {engine}:\n{run.stderr}")
                step = next((out / "steps").glob("*/r1-01-l.i0-*.json"))
                r = json.loads(step.read_text())
                m = r["metrics"]
                idx = json.loads(next((out / "steps").glob("*/r1-02-l.x-*.json")).read_text())
                row = (
                    r["throughput"],
                    m["client_cpu_us_per_op"],
                    m["server_cpu_us_per_op"],
                    m["client_cpu_us_per_op"] / m["server_cpu_us_per_op"],
                    idx["throughput"],
                )
                figures[engine].append(row)
                print(
                    f"round {rnd} {engine:8} l.i0 {row[0]:>9,.0f} rows/s  client {row[1]:6.2f} µs/row  "
                    f"server {row[2]:6.2f} µs/row  client/server {row[3]:.3f}  l.x {row[4]:>9,.0f} indexed rows/s",
                    flush=True,
                )
    print(f"\nmedians over {a.rounds} rounds, {a.clients} clients × {a.rows:,} rows:")
    ok = True
    for engine, rows in figures.items():
        med = [statistics.median(x[i] for x in rows) for i in range(5)]
        verdict = "ok" if med[3] <= 0.25 else "OVER the bar of 0.25"
        ok &= med[3] <= 0.25
        print(
            f"  {engine:8} l.i0 {med[0]:>9,.0f} rows/s; client {med[1]:.2f} µs/row, server {med[2]:.2f} µs/row: "
            f"client/server {med[3]:.3f} ({verdict}); l.x {med[4]:,.0f} indexed rows/s"
        )
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
