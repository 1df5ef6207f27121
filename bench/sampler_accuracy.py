#!/usr/bin/env python3
"""Sampler accuracy: relbench's per-operation costs against vmstat and iostat.

Runs relbench on a managed MariaDB whose buffer pool is much smaller than
its table and which reads with O_DIRECT, so every step does real device IO,
while Debian's `vmstat 1` and `iostat -dxk 1 DEVICE` (packages procps and
sysstat) record the same minutes. For each workload step it prints CPU/op,
cs/op, read KiB/op and write KiB/op as relbench measured them beside the
same figures computed from vmstat's and iostat's lines, and their ratio;
they must agree within 5%.

The tools' lines are matched to each step's measured window by the unix
time relbench records for the window's start (`metrics.window_start`): a
vmstat or iostat line covers the second before it was printed, and lines
wholly inside the window are averaged. relbench's figure is the whole
window's. Both divide by the same throughput, so the comparison is of rates.
It also prints the sampler's own CPU, which must stay under 0.5% of a core.

Usage: python3 bench/sampler_accuracy.py [--secs 20] [--rows 500000]
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RELBENCH = ROOT / "target" / "release" / "relbench"
CORES = os.cpu_count()

CONFIG = """[mysqld]
innodb_buffer_pool_size = 32M
innodb_log_file_size = 256M
innodb_flush_log_at_trx_commit = 1
innodb_flush_method = O_DIRECT
innodb_io_capacity = 1000
performance_schema = OFF
"""

PLAN = """steps = ["load", "settle", "point-query", "read-only-100", "update-index", "insert"]
clients = [2]
[scale]
tables = 1
rows = {rows}
[duration]
warmup = "3s"
read = "{secs}s"
write = "{secs}s"
insert = "{secs}s"
[settle]
base = "2s"
per_million_rows = "0s"
max = "60s"
[[target]]
name = "innodb-small-pool"
engine = "mariadb"
basedir = "/usr"
config = "small.cnf"
datadir = "{datadir}"
"""


def record(cmd, lines):
    """Runs a tool, keeping (arrival time, line) for every line it prints."""
    p = subprocess.Popen(["stdbuf", "-oL"] + cmd, stdout=subprocess.PIPE, text=True)

    def pump():
        for line in p.stdout:
            lines.append((time.time(), line.split()))

    t = threading.Thread(target=pump, daemon=True)
    t.start()
    return p, t


def vmstat_rates(lines, w0, w1):
    """Mean busy CPU seconds per second (all CPUs) and cs/s over the lines
    wholly inside [w0, w1]."""
    head = None
    picked = []
    for t, f in lines:
        if "us" in f and "sy" in f:
            head = f
            continue
        if head is None or not f or not f[0].isdigit():
            continue
        if t - 1.0 >= w0 and t <= w1:
            row = dict(zip(head, f))
            picked.append(row)
    if not picked:
        return None
    mean = lambda k: sum(int(r[k]) for r in picked) / len(picked)
    busy = mean("us") + mean("sy")
    return {"busy": busy / 100.0 * CORES, "cs": mean("cs"), "n": len(picked)}


def iostat_rates(lines, device, w0, w1):
    head = None
    picked = []
    for t, f in lines:
        if f and f[0] == "Device":
            head = f
            continue
        if head and f and f[0] == device and t - 1.0 >= w0 and t <= w1:
            picked.append(dict(zip(head, f)))
    if not picked:
        return None
    mean = lambda k: sum(float(r[k].replace(",", ".")) for r in picked) / len(picked)
    return {"rkb": mean("rkB/s"), "wkb": mean("wkB/s"), "r": mean("r/s"), "w": mean("w/s"), "n": len(picked)}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--secs", type=int, default=20)
    ap.add_argument("--rows", type=int, default=500_000)
    args = ap.parse_args()
    for tool in ("vmstat", "iostat", "stdbuf"):
        if subprocess.run(["which", tool], capture_output=True).returncode != 0:
            sys.exit(f"{tool} is missing: apt-get install procps sysstat coreutils")
    if not RELBENCH.exists():
        sys.exit("build relbench first: cargo build --release")

    with tempfile.TemporaryDirectory(dir=str(ROOT / "target")) as tmp:
        tmp = Path(tmp)
        (tmp / "small.cnf").write_text(CONFIG)
        datadir = tmp / "datadir"
        (tmp / "plan.toml").write_text(PLAN.format(rows=args.rows, secs=args.secs, datadir=datadir))
        out = tmp / "results"
        vm, io = [], []
        # The device is only known once relbench has resolved it; iostat
        # records every device and the matching picks the right one.
        pv, tv = record(["vmstat", "-n", "1"], vm)
        pi, ti = record(["iostat", "-dxk", "-y", "1"], io)
        try:
            r = subprocess.run([str(RELBENCH), "run", "-q", str(tmp / "plan.toml"), "--out", str(out)],
                               capture_output=True, text=True)
        finally:
            time.sleep(1.5)
            pv.terminate()
            pi.terminate()
            pv.wait()
            pi.wait()
        if r.returncode != 0:
            sys.exit(f"relbench failed ({r.returncode}):\n{r.stderr}")
        run = json.loads((out / "run.json").read_text())
        devices = run["targets"][0].get("devices") or {}
        if len(devices.get("devices", [])) != 1:
            sys.exit(f"this check needs one device under the datadir; relbench resolved {devices}")
        device = devices["devices"][0]
        print(f"device: {devices['resolved']}; {CORES} CPUs; steps of {args.secs} s, 2 clients, "
              f"{args.rows} rows, InnoDB buffer pool 32M with O_DIRECT\n")
        header = f"{'step':<15} {'figure':<13} {'relbench':>10} {'vmstat/iostat':>14} {'ratio':>7}"
        print(header)
        print("-" * len(header))
        worst = 0.0
        sampler = []
        for f in sorted((out / "steps" / "innodb-small-pool").glob("*.json")):
            s = json.loads(f.read_text())
            m = s["metrics"]
            if m.get("sampler"):
                sampler.append(m["sampler"]["pct_of_core"])
            # Schema 3: the step is the plan's (kind, workload, tag).
            kind = s["kind"]["kind"]
            if kind != "workload" or s["failed"] or not m.get("window_start"):
                continue
            s["step"] = s["kind"]["workload"] + (f".{s['tag']}" if s.get("tag") else "")
            w0 = m["window_start"]
            w1 = w0 + s["secs"]
            ops = s["throughput"]  # per second; the same divisor for both
            v = vmstat_rates(vm, w0, w1)
            i = iostat_rates(io, device, w0, w1)
            if v is None or i is None:
                print(f"{s['step']:<15} no vmstat/iostat lines inside the window")
                continue
            sysm, disk = m["system"], m["disk"]
            secs = s["secs"]
            rows = [
                ("CPU µs/op", m["cpu_us_per_op"], v["busy"] * 1e6 / ops),
                ("cs/op", m["cs_per_op"], v["cs"] / ops),
                ("read KiB/op", m["read_kb_per_op"], i["rkb"] / ops),
                ("write KiB/op", m["write_kb_per_op"], i["wkb"] / ops),
            ]
            for name, mine, theirs in rows:
                if mine is None:
                    print(f"{s['step']:<15} {name:<13} {'not measured':>10}")
                    continue
                # Under 1 MiB/s (a read-only step's background log writes)
                # one 4 KiB write more or less at the window's edges moves
                # the rate by whole percents, whoever measures: such figures
                # are shown, not judged.
                judged = theirs * ops >= 1024 if "KiB" in name else True
                ratio = f"{mine / theirs:7.3f}" if theirs else "      —"
                if judged:
                    worst = max(worst, abs(mine / theirs - 1.0))
                mark = "" if judged else "  (under 1 MiB/s: not judged)"
                print(f"{s['step']:<15} {name:<13} {mine:>10.3f} {theirs:>14.3f} {ratio}{mark}")
            print(f"{'':<15} {'lines used':<13} vmstat {v['n']}, iostat {i['n']} of a {secs:.0f} s window;"
                  f" relbench {sysm['cpu_util_pct']:.1f}% CPU, {disk['read_mb_per_sec']:.2f} rMB/s,"
                  f" {disk['write_mb_per_sec']:.2f} wMB/s")
        print()
        print(f"largest disagreement: {worst * 100:.1f}% ({'within' if worst <= 0.05 else 'OUTSIDE'} 5%)")
        if sampler:
            print(f"sampler CPU: at most {max(sampler):.3f}% of one core per step "
                  f"(mean {sum(sampler) / len(sampler):.3f}%; bar 0.5%)")
        return 0 if worst <= 0.05 else 1


if __name__ == "__main__":
    sys.exit(main())
