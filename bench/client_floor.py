#!/usr/bin/env python3
"""relbench's client against the floor: a client that only does the syscalls.

`examples/client_floor.rs` (built here) opens each connection and prepares
sysbench's point query with relbench's own wire clients, then loops on
nothing but writing one execution's bytes (the bytes relbench writes) and
reading until the reply is whole. relbench (`point-query`, one-off), sysbench
(`oltp_point_select`) and the floor take turns on one managed server per
engine (started with `relbench serve`), one table, TCP to 127.0.0.1, at 2
and 32 clients, in interleaved rounds with the order rotating. Client CPU
is getrusage(RUSAGE_CHILDREN) around each tool's whole process ÷ its
events (relbench's count includes its start-up and report, so it errs
against relbench). Prints each tool's client µs/op and its ratio to the
floor's.

    python3 bench/client_floor.py [--engines mariadb,postgres] [--clients 2,32]
                                  [--rounds 3] [--secs 10] [--rows 100000]
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import client_overhead as co  # noqa: E402  (the servers, the load, the measuring)

ROOT = co.ROOT
FLOOR = ROOT / "target" / "release" / "examples" / "client_floor"


def bench(name, args, tmp):
    e = co.ENGINES[name]
    serve, port, pid, url, secret = co.start_server(name, tmp)
    rows = {}
    try:
        load_args = argparse.Namespace(tables=1, rows=args.rows, secs=1, clients=1)
        p = tmp / f"{name}-load.toml"
        co.relbench_plan(p, url, ["load", "settle"], load_args)
        co.measure([str(co.RELBENCH), "run", "-q", str(p), "--out", str(tmp / f"{name}-load")], pid)
        tools = ["floor", "relbench", "sysbench"]
        for clients in args.clients:
            for r in range(args.rounds):
                order = tools[r % 3:] + tools[:r % 3]
                for tool in order:
                    if tool == "floor":
                        _, client, _, out = co.measure(
                            [str(FLOOR), name, str(port), "sbtest", str(clients), str(args.secs),
                             str(args.rows)], pid)
                        mm = re.search(r"events (\d+) secs ([\d.]+)", out)
                        events, secs = int(mm.group(1)), float(mm.group(2))
                    elif tool == "sysbench":
                        sb = (["sysbench", f"--config-file={secret}"]
                              + [a.format(port=port) for a in e["sysbench"]]
                              + ["--tables=1", f"--table-size={args.rows}", f"--threads={clients}",
                                 "--rand-type=uniform", "--report-interval=0",
                                 f"--time={args.secs}", "oltp_point_select", "run"])
                        _, client, _, out = co.measure(sb, pid)
                        events = int(re.search(r"transactions:\s+(\d+)", out).group(1))
                        secs = float(re.search(r"total time:\s+([\d.]+)s", out).group(1))
                    else:
                        o = tmp / f"{name}-c{clients}-{r}"
                        _, client, _, _ = co.measure(
                            [str(co.RELBENCH), "run", "-q", "--url", url, "--password-env",
                             "RELBENCH_BENCH_PASSWORD", "--workload", "point-query",
                             "--clients", str(clients), "--time", f"{args.secs}s",
                             "--warmup", "0s", "--tables", "1", "--rows", str(args.rows),
                             "--out", str(o)], pid)
                        events, secs = relbench_events(o)
                    rows.setdefault((clients, tool), []).append(
                        (events / secs, client * 1e6 / events))
    finally:
        serve.stdin.close()
        serve.wait(timeout=300)
    return rows


def relbench_events(out_dir):
    """A one-off run's events and window (its step's target is named `target`)."""
    files = sorted((out_dir / "steps").glob("*/*.json"))
    r = json.loads(files[-1].read_text())
    if r.get("failed"):
        sys.exit(f"relbench step failed: {r['failed']}")
    return r["events"], r["secs"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--engines", default="mariadb,postgres")
    ap.add_argument("--clients", default="2,32")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--secs", type=int, default=10)
    ap.add_argument("--rows", type=int, default=100000)
    args = ap.parse_args()
    args.clients = [int(c) for c in args.clients.split(",")]
    subprocess.run(["cargo", "build", "--release", "--quiet", "--bin", "relbench",
                    "--example", "client_floor"], cwd=ROOT, check=True)
    med = statistics.median
    print(f"client CPU per point query: relbench, sysbench and the floor, TCP to 127.0.0.1, "
          f"1 table x {args.rows} rows, {args.rounds} interleaved rounds of {args.secs} s; medians")
    with tempfile.TemporaryDirectory(prefix="relbench-floor-") as t:
        os.chmod(t, 0o755)
        for name in args.engines.split(","):
            rows = bench(name, args, Path(t))
            print(f"\n{name}")
            print(f"  {'clients':>7} {'tool':<9} {'ops/s':>9} {'client us/op':>13} {'÷ floor':>8}")
            for c in args.clients:
                floor = med(x[1] for x in rows[(c, "floor")])
                for tool in ["floor", "relbench", "sysbench"]:
                    v = rows[(c, tool)]
                    us = med(x[1] for x in v)
                    print(f"  {c:>7} {tool:<9} {med(x[0] for x in v):>9.0f} {us:>13.2f} "
                          f"{us / floor:>8.2f}")


if __name__ == "__main__":
    main()
