#!/usr/bin/env python3
"""Client overhead: relbench against sysbench 1.0.20, side by side.

On one managed server per engine (started with `relbench serve`), the same
table, the same client count and the same transport (TCP to 127.0.0.1 for
both tools), relbench and sysbench take turns -- interleaved rounds, the
order alternating -- on point-query, read-only (range 100) and update-index, and relbench runs
sysbench's own oltp_point_select.lua through its Lua runtime beside them.
It also compares loading: `sysbench prepare` against relbench's load of the
same tables with the same parallelism.

Both tools are measured the same way, from outside:
  client CPU  getrusage(RUSAGE_CHILDREN) around the tool's whole process,
              divided by the events the tool reports (this counts relbench's
              start-up and report writing too, so it errs against relbench);
  server CPU  /proc CPU of the server's processes (live ones, plus children
              the server reaped) over the same interval, divided likewise.

Usage: python3 bench/client_overhead.py [--engines mariadb,postgres]
       [--rounds 3] [--secs 10] [--rows 100000] [--clients 2]
       [--relbench PATH] [--before PATH]
       (--before: a build from before a change, measured in the same rounds)
"""

import argparse
import os
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RELBENCH = ROOT / "target" / "release" / "relbench"
HZ = os.sysconf("SC_CLK_TCK")

ENGINES = {
    "mariadb": {
        "basedir": "/usr",
        "url": "mariadb://relbench@127.0.0.1:{port}/sbtest",
        "sysbench": ["--db-driver=mysql", "--mysql-host=127.0.0.1", "--mysql-port={port}",
                     "--mysql-user=relbench", "--mysql-db=sbtest"],
        # The password goes in a private config file, not on the command
        # line (where `ps` shows it to every user).
        "password_option": "mysql-password",
    },
    "postgres": {
        "basedir": "/usr/lib/postgresql/15",
        "url": "postgres://relbench@127.0.0.1:{port}/sbtest",
        "sysbench": ["--db-driver=pgsql", "--pgsql-host=127.0.0.1", "--pgsql-port={port}",
                     "--pgsql-user=relbench", "--pgsql-db=sbtest"],
        "password_option": "pgsql-password",
    },
}

# relbench workload, sysbench test, sysbench options that make it the same work.
WORKLOADS = [
    ("point-query", "oltp_point_select", []),
    # The same point query, written in the plan as a SQL workload: it must
    # cost the client no more than the built-in one (within 5%).
    ("user-point-query", "oltp_point_select", []),
    # sysbench's own oltp_point_select.lua, run by relbench's Lua runtime:
    # the script costs relbench's client no more than sysbench's.
    ("lua-point-select", "oltp_point_select", []),
    ("read-only-100", "oltp_read_only", ["--range_size=100"]),
    ("update-index", "oltp_update_index", []),
]


def tree_cpu(root_pid):
    """CPU seconds of a process, its live descendants, and reaped children."""
    children = {}
    for p in os.listdir("/proc"):
        if p.isdigit():
            try:
                stat = open(f"/proc/{p}/stat").read()
            except OSError:
                continue
            fields = stat[stat.rfind(")") + 2:].split()
            children.setdefault(int(fields[1]), []).append((int(p), fields))
    total = 0.0
    stack = [root_pid]
    seen = set()
    while stack:
        pid = stack.pop()
        if pid in seen:
            continue
        seen.add(pid)
        try:
            stat = open(f"/proc/{pid}/stat").read()
        except OSError:
            continue
        f = stat[stat.rfind(")") + 2:].split()
        total += sum(int(x) for x in f[11:15]) / HZ
        stack.extend(c for c, _ in children.get(pid, []))
    return total


def children_cpu():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def measure(cmd, server_pid):
    """Runs cmd; returns (wall secs, client CPU secs, server CPU secs, stdout)."""
    s0, c0, t0 = tree_cpu(server_pid), children_cpu(), time.monotonic()
    out = subprocess.run(cmd, capture_output=True, text=True)
    t1, c1, s1 = time.monotonic(), children_cpu(), tree_cpu(server_pid)
    if out.returncode != 0:
        sys.exit(f"failed: {' '.join(cmd)}\n{out.stdout}\n{out.stderr}")
    return t1 - t0, c1 - c0, s1 - s0, out.stdout


def relbench_plan(path, url, steps, args):
    path.write_text(f"""steps = {steps!r}
clients = [{args.clients}]
[scale]
tables = {args.tables}
rows = {args.rows}
[duration]
warmup = "0s"
read = "{args.secs}s"
write = "{args.secs}s"
insert = "{args.secs}s"
[settle]
base = "0s"
per_million_rows = "0s"
max = "0s"
[[target]]
name = "t"
engine = "{'postgres' if url.startswith('postgres') else 'mariadb'}"
url = "{url}"
password_env = "RELBENCH_BENCH_PASSWORD"

[[workload]]
name = "user-point-query"
[[workload.statement]]
name = "get"
sql = "SELECT c FROM sbtest1 WHERE id = :id"
bind = {{ id = "uniform(1, rows)" }}
returns = 1

[[workload]]
name = "lua-point-select"
script = "/usr/share/sysbench/oltp_point_select.lua"
options = {{ tables = {args.tables}, table_size = {args.rows}, rand_type = "uniform" }}
""".replace("'", '"'))


def relbench_events(out_dir):
    import json
    files = sorted((out_dir / "steps" / "t").glob("*.json"))
    r = json.loads(files[-1].read_text())
    if r.get("failed"):
        sys.exit(f"relbench step failed: {r['failed']}")
    return r["events"], r["secs"]


def start_server(name, tmp):
    """One managed server of `name` (`relbench serve`), its benchmark user's
    password in RELBENCH_BENCH_PASSWORD and in a private sysbench config
    file. Returns (the serve process, port, server pid, URL, config file);
    closing the process's stdin stops the server."""
    e = ENGINES[name]
    plan = tmp / f"{name}-server.toml"
    plan.write_text(f'[[target]]\nname = "srv"\nengine = "{name}"\nbasedir = "{e["basedir"]}"\n')
    serve = subprocess.Popen([str(RELBENCH), "serve", str(plan), "--target", "srv",
                              "--out", str(tmp / f"{name}-server")],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    line = serve.stdout.readline()
    m = re.search(r"port=(\d+) .* pid=(\d+) .* password=(\S+)", line)
    if not m:
        serve.kill()
        sys.exit(f"the {name} server did not start: {line}")
    # The benchmark user's password for this start: serve gives it on its
    # ready line only; relbench's plans read it from the environment.
    password = m.group(3)
    os.environ["RELBENCH_BENCH_PASSWORD"] = password
    port, pid = int(m.group(1)), int(m.group(2))
    secret = tmp / f"{name}-sysbench.conf"
    fd = os.open(secret, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w") as f:
        f.write(f"{e['password_option']}={password}\n")
    return serve, port, pid, e["url"].format(port=port), secret


def bench_engine(name, args, tmp):
    e = ENGINES[name]
    # The relbench builds measured: this tree's, and the one before a
    # change (--before), run the same way, in the same rounds.
    builds = {"relbench": RELBENCH}
    if args.before:
        builds["before"] = Path(args.before).resolve()
    tools = ["sysbench"] + list(builds)
    serve, port, pid, url, secret = start_server(name, tmp)
    sb = ["sysbench", f"--config-file={secret}"] + [a.format(port=port) for a in e["sysbench"]] + [
        f"--tables={args.tables}", f"--table-size={args.rows}", f"--threads={args.clients}",
        "--rand-type=uniform", "--report-interval=0"]
    rows = {}
    try:
        # Loading: sysbench prepare against relbench's load, same tables,
        # same parallelism (one thread per table, as both do).
        loads = {t: [] for t in tools}
        total_rows = args.tables * args.rows
        for r in range(args.rounds):
            subprocess.run(sb + ["oltp_read_only", "cleanup"], capture_output=True)
            wall, client, server, _ = measure(sb + [f"--threads={args.tables}", "oltp_read_only", "prepare"], pid)
            loads["sysbench"].append((total_rows / wall, client * 1e6 / total_rows, server * 1e6 / total_rows))
            for tool, binary in builds.items():
                p = tmp / f"{name}-load-{tool}-{r}.toml"
                relbench_plan(p, url, ["load"], args)
                out = tmp / f"{name}-load-{tool}-{r}"
                wall, client, server, _ = measure([str(binary), "run", "-q", str(p), "--out", str(out)], pid)
                loads[tool].append((total_rows / wall, client * 1e6 / total_rows, server * 1e6 / total_rows))
        p = tmp / f"{name}-settle.toml"
        relbench_plan(p, url, ["settle"], args)
        measure([str(RELBENCH), "run", "-q", str(p), "--out", str(tmp / f"{name}-settle")], pid)

        for r in range(args.rounds):
            for wl, test, extra in WORKLOADS:
                # The order rotates, so no tool always goes first.
                order = tools[r % len(tools):] + tools[:r % len(tools)]
                for tool in order:
                    if tool == "sysbench":
                        wall, client, server, out = measure(sb + extra + [f"--time={args.secs}", test, "run"], pid)
                        events = int(re.search(r"transactions:\s+(\d+)", out).group(1))
                        secs = float(re.search(r"total time:\s+([\d.]+)s", out).group(1))
                    else:
                        p = tmp / f"{name}-{wl}-{tool}-{r}.toml"
                        o = tmp / f"{name}-{wl}-{tool}-{r}"
                        relbench_plan(p, url, [wl], args)
                        wall, client, server, _ = measure([str(builds[tool]), "run", "-q", str(p), "--out", str(o)], pid)
                        events, secs = relbench_events(o)
                    rows.setdefault((wl, tool), []).append(
                        (events / secs, client * 1e6 / events, server * 1e6 / events))
    finally:
        serve.stdin.close()
        serve.wait(timeout=300)
    return loads, rows, tools


def ratio_lines(label, rows, tools):
    """Per tool: medians, then each relbench build's ratios to sysbench."""
    med = statistics.median
    for tool in tools:
        v = rows[tool]
        print(f"  {label:<14} {tool:<9} {med(x[0] for x in v):>9.0f} "
              f"{med(x[1] for x in v):>13.2f} {med(x[2] for x in v):>13.2f}")
    s = rows["sysbench"]
    for tool in tools[1:]:
        r = rows[tool]
        name = "ratio" if tool == "relbench" else f"{tool} ratio"
        print(f"  {label:<14} {name:<9} {med(x[0] for x in r) / med(x[0] for x in s):>9.2f} "
              f"{med(x[1] for x in r) / med(x[1] for x in s):>13.2f} "
              f"{med(x[2] for x in r) / med(x[2] for x in s):>13.2f}   ({tool} / sysbench)")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--engines", default="mariadb,postgres")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--secs", type=int, default=10)
    ap.add_argument("--rows", type=int, default=100000)
    ap.add_argument("--tables", type=int, default=2)
    ap.add_argument("--clients", type=int, default=2)
    ap.add_argument("--workloads", help="only these (comma-separated), e.g. point-query,lua-point-select")
    ap.add_argument("--relbench", help="the relbench binary to measure (default: build this tree)")
    ap.add_argument("--before", help="a second relbench binary, built before a change, measured in "
                    "the same rounds: its ratios print beside this tree's")
    args = ap.parse_args()
    global RELBENCH, WORKLOADS
    if args.workloads:
        WORKLOADS = [w for w in WORKLOADS if w[0] in args.workloads.split(",")]
    if args.relbench:
        RELBENCH = Path(args.relbench).resolve()
    else:
        subprocess.run(["cargo", "build", "--release", "--quiet"], cwd=ROOT, check=True)
    print(f"relbench: {RELBENCH}")
    print(f"relbench against sysbench: {args.clients} clients, TCP to 127.0.0.1, "
          f"{args.tables} tables x {args.rows} rows, {args.rounds} interleaved rounds of {args.secs} s; medians")
    with tempfile.TemporaryDirectory(prefix="relbench-bench-") as t:
        # PostgreSQL runs as its own user, which must reach the datadir.
        os.chmod(t, 0o755)
        for name in args.engines.split(","):
            loads, rows, tools = bench_engine(name, args, Path(t))
            print(f"\n{name}")
            print(f"  {'workload':<14} {'tool':<9} {'ops/s':>9} {'client us/op':>13} {'server us/op':>13}")
            for wl, _, _ in WORKLOADS:
                ratio_lines(wl, {tool: rows[(wl, tool)] for tool in tools}, tools)
            med = statistics.median
            if ("user-point-query", "relbench") in rows and ("point-query", "relbench") in rows:
                user = med(x[1] for x in rows[("user-point-query", "relbench")])
                built = med(x[1] for x in rows[("point-query", "relbench")])
                print(f"  user-point-query / point-query, relbench client us/op: {user:.2f} / {built:.2f} = {user / built:.3f}")
            if ("lua-point-select", "relbench") in rows:
                lua = med(x[1] for x in rows[("lua-point-select", "relbench")])
                theirs = med(x[1] for x in rows[("lua-point-select", "sysbench")])
                print(f"  oltp_point_select.lua client us/op, relbench / sysbench: {lua:.2f} / {theirs:.2f} = {lua / theirs:.3f}")
            print(f"  {'load':<14} {'tool':<9} {'rows/s':>9} {'client us/row':>13} {'server us/row':>13}")
            ratio_lines("load", loads, tools)


if __name__ == "__main__":
    main()
