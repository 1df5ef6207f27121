#!/usr/bin/env python3
"""What prepared statements change on the server, for the two benchmarks
whose originals send text.

The Insert Benchmark and LinkBench send their statements as text by
default, as iibench.py (mysqlclient) and LinkBench (JDBC without
server-side prepare) do; `prepared = true` on a step prepares them. This
runs both ways on one managed MariaDB 10.11 InnoDB (examples/configs/
innodb.cnf), alternately, round after round, and prints the server's CPU
per operation of each step (per row for the loads, per query, per
LinkBench request) from relbench's own step files (the server's /proc
process tree read at the window's edges), with prepared ÷ text.

No bar: it states what the option changes, for the guides.

Usage: python3 bench/protocol_cost.py [--rounds 2] [--rows 200000] [--nodes 50000] [--requests 20000]
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

TARGET = f"""
[[target]]
name = "innodb"
engine = "mariadb"
basedir = "/usr"
config = "{ROOT}/examples/configs/innodb.cnf"
"""

IB_STEPS = ["l.i0", "l.x", "l.i1", "qr100", "qp100"]
LB_STEPS = ["lb.load", "lb.request"]


def steps(names, prepared: bool) -> str:
    if not prepared:
        return ", ".join(f'"{n}"' for n in names)
    return ", ".join(f'{{ step = "{n}", prepared = true }}' for n in names)


def run(plan_text: str) -> dict:
    """Server CPU µs per operation of each workload step, by step."""
    with tempfile.TemporaryDirectory() as d:
        Path(d).chmod(0o755)
        plan = Path(d) / "plan.toml"
        plan.write_text(plan_text + TARGET)
        out = Path(d) / "out"
        r = subprocess.run(
            [str(RELBENCH), "run", "-q", str(plan), "--out", str(out)],
            capture_output=True,
            text=True,
        )
        if r.returncode != 0:
            sys.exit(f"relbench failed:\n{r.stderr}")
        fig = {}
        for f in sorted((out / "steps" / "innodb").glob("r1-*.json")):
            s = json.loads(f.read_text())
            name = s.get("kind", {}).get("workload")
            cpu = (s.get("metrics") or {}).get("server_cpu_us_per_op")
            if name and cpu is not None and name != "l.x":
                fig[f"{name} ({s.get('unit')})"] = cpu
        return fig


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--rows", type=int, default=200_000, help="Insert Benchmark rows per table (l.i0)")
    ap.add_argument("--nodes", type=int, default=50_000, help="LinkBench nodes")
    ap.add_argument("--requests", type=int, default=20_000, help="LinkBench requests per requester (2 requesters)")
    a = ap.parse_args()
    subprocess.run(["cargo", "build", "--release", "-q"], cwd=ROOT, check=True)
    figures = {"text": [], "prepared": []}
    for rnd in range(1, a.rounds + 1):
        for mode in figures:
            p = mode == "prepared"
            ib = (
                f"steps = [{steps(IB_STEPS, p)}]\nclients = [1]\nseed = 1\n"
                f"[scale]\nrows = {a.rows}\n[insert]\nl_i1_rows = {a.rows // 2}\n"
                '[duration]\nwarmup = "2s"\nread = "20s"\n'
            )
            lb = (
                f"steps = [{steps(LB_STEPS, p)}]\nseed = 1\n"
                f"[linkbench]\nmaxid1 = {a.nodes + 1}\nloaders = 2\nrequesters = 2\n"
                f'requests = {a.requests}\n[duration]\nwarmup = "0s"\n'
            )
            f = run(ib) | run(lb)
            figures[mode].append(f)
            print(f"round {rnd} {mode:8} " + "  ".join(f"{k} {v:.1f}" for k, v in f.items()), flush=True)
    keys = list(figures["text"][0])
    print(f"\nserver CPU µs per operation, medians over {a.rounds} round(s), MariaDB 10.11 InnoDB:")
    print(f"  {'step (unit)':28} {'text':>10} {'prepared':>10} {'prepared/text':>14}")
    for k in keys:
        t = statistics.median(f[k] for f in figures["text"] if k in f)
        p = statistics.median(f[k] for f in figures["prepared"] if k in f)
        print(f"  {k:28} {t:10.1f} {p:10.1f} {p / t if t else float('nan'):14.3f}")


if __name__ == "__main__":
    main()
