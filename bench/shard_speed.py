#!/usr/bin/env python3
"""What sharding buys, and what merging costs.

1. Wall time of a small study run as one shard (`--shard 1/1`) and as two
   shards in parallel (`--shard 1/2`, `--shard 2/2`). This machine has 2
   cores, so the steps are not CPU-bound: rate-limited SQLite steps, whose
   clients sleep between events (the base runs on both shards, so two
   shards do more work than one; the expected ratio from the plan's
   assignment is printed beside the measured one).
2. `relbench merge` of 20 shards of a 40-target x 40-step study (the
   check, the copy and the report in all five formats), best of --rounds.
   The shards are made from real step files of one run of the built-in
   quick plan, renamed: each shard gets the base and the targets the
   plan's assignment gives it (`relbench check DIR --shards 20`), each
   target 40 steps (the quick plan's 11 again as second, third and fourth
   occurrences).

    python3 bench/shard_speed.py
"""
import argparse
import copy
import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BIN = os.path.join(ROOT, "target", "release", "relbench")

PARALLEL_PLAN = """
steps = ["load", {{ step = "point-query", rate = {rate} }}, {{ step = "update-index", rate = {wrate} }}]
clients = [1]
seed = 3

[scale]
tables = 1
rows = 5000

[duration]
warmup = "200ms"
read = "{secs}s"
write = "{secs}s"

[interference]
retries = 0
"""

TARGET = """
[[target]]
name = "{name}"
engine = "sqlite"
[target.pragmas]
journal_mode = "{journal}"
synchronous = "{sync}"
"""


def build():
    subprocess.run(["cargo", "build", "--release", "-q"], cwd=ROOT, check=True)


def parallel(work, secs):
    text = PARALLEL_PLAN.format(rate=200, wrate=50, secs=secs)
    for i, (j, s) in enumerate([("delete", "full"), ("wal", "normal"), ("wal", "full"),
                                ("truncate", "full"), ("memory", "off")]):
        text += TARGET.format(name=["base", "wal", "wal-full", "truncate", "memory"][i],
                              journal=j, sync=s)
    plan = os.path.join(work, "parallel.toml")
    open(plan, "w").write(text)
    check = subprocess.run([BIN, "check", plan, "--shards", "2"], capture_output=True,
                           text=True, check=True).stdout
    print(check.strip())

    def run(shards):
        t0 = time.monotonic()
        procs = [subprocess.Popen([BIN, "run", "-q", plan, "--shard", f"{i}/{shards}",
                                   "--out", os.path.join(work, f"p{shards}-{i}")],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
                 for i in range(1, shards + 1)]
        for p in procs:
            _, err = p.communicate()
            if p.returncode != 0:
                sys.exit(f"shard failed: {err.decode()}")
        return time.monotonic() - t0

    one = run(1)
    two = run(2)
    print(f"one shard: {one:.1f} s; two shards in parallel: {two:.1f} s; ratio {two / one:.2f}")


def fabricate(work, source, shards, targets, steps):
    """Shards of a `targets` x `steps` study from the step files in `source`."""
    info = json.load(open(os.path.join(source, "run.json")))
    src_targets = [t["name"] for t in info["plan"]["targets"]]
    names = ["base"] + [f"t{i:02d}" for i in range(1, targets)]
    plan_targets = []
    for i, name in enumerate(names):
        t = copy.deepcopy(next(t for t in info["plan"]["targets"]
                               if t["name"] == src_targets[i % len(src_targets)]))
        t["name"] = name
        plan_targets.append(t)
    info["plan"]["targets"] = plan_targets
    info["plan"]["comparisons"] = []
    info["plan"]["repeats"] = 1
    info["targets"] = []
    info["status"] = "complete"
    info["plan_hash"] = "bench-shard-speed"
    # The assignment, as relbench computes it.
    whole = os.path.join(work, "whole")
    os.makedirs(whole)
    json.dump(info, open(os.path.join(whole, "run.json"), "w"))
    out = subprocess.run([BIN, "check", whole, "--shards", str(shards)], capture_output=True,
                         text=True, check=True).stdout
    own = {}
    for line in out.splitlines():
        if line.startswith("shard "):
            head, rest = line.split(": ", 1)
            index = int(head.split()[1].split("/")[0])
            part = rest.split("; about")[0]
            own[index] = [] if part == "the base alone" else part.split(", ")
    files = {}
    for t in src_targets:
        files[t] = sorted(glob.glob(os.path.join(source, "steps", t, "r1-*.json")))
    dirs = []
    count = 0
    for i in range(1, shards + 1):
        d = os.path.join(work, f"shard-{i}")
        dirs.append(d)
        mine = ["base"] + own[i]
        rec = copy.deepcopy(info)
        rec["shard"] = {"index": i, "count": shards, "targets": [n for n in names if n in mine],
                        "everywhere": ["base"]}
        os.makedirs(d)
        json.dump(rec, open(os.path.join(d, "run.json"), "w"))
        for name in mine:
            src = src_targets[names.index(name) % len(src_targets)]
            os.makedirs(os.path.join(d, "steps", name))
            n = 0
            occurrence = 0
            while n < steps:
                occurrence += 1
                for f in files[src]:
                    if n >= steps:
                        break
                    s = json.load(open(f))
                    s["target"] = name
                    s["seq"] = n + 1
                    s["occurrence"] = occurrence
                    label = os.path.basename(f).split("-", 2)[2]
                    json.dump(s, open(os.path.join(d, "steps", name,
                                                   f"r1-{n + 1:02d}-{label}"), "w"))
                    n += 1
                    count += 1
    return dirs, count


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--source", help="a run of the built-in quick plan (default: run it)")
    ap.add_argument("--secs", type=float, default=3.0, help="each step's window in part 1")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--skip-parallel", action="store_true")
    args = ap.parse_args()
    build()
    work = tempfile.mkdtemp(prefix="relbench-shard-speed-")
    try:
        if not args.skip_parallel:
            parallel(work, args.secs)
        source = args.source
        if not source:
            source = os.path.join(work, "quick")
            subprocess.run([BIN, "run", "-q", "--out", source], stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL, check=True)
        dirs, files = fabricate(work, source, 20, 40, 40)
        times = []
        for r in range(args.rounds):
            out = os.path.join(work, f"merged-{r}")
            t0 = time.monotonic()
            subprocess.run([BIN, "merge", *dirs, "--out", out], stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL, check=True)
            times.append(time.monotonic() - t0)
        times.sort()
        print(f"merge of 20 shards x 40 targets x 40 steps ({files} step files) with its report "
              f"in 5 formats: best {times[0]:.3f} s, median {times[len(times) // 2]:.3f} s "
              f"of {args.rounds}")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
