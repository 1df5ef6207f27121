#!/usr/bin/env python3
"""How big a step file is, in this build's encoding and in the one before.

Runs the built-in quick plan and one 60 s step of point queries at 10
clients on SQLite, then prints each file's size as this build wrote it
(schema version 7: compact JSON, the per-second series and each class's
seconds as columns) beside the same data in the version 6 encoding
(pretty JSON, an object a second, no lossless histograms), re-encoded
here from the file itself, so both sizes hold exactly the same figures,
and the bytes this build's lossless histograms (`hdr`, a fixed 3-4 KB a
statement class, whatever the step's length) add to it.

    python3 bench/step_size.py
    python3 bench/step_size.py --secs 10     # a shorter long step
"""
import argparse
import glob
import json
import os
import shutil
import subprocess
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BIN = os.path.join(ROOT, "target", "release", "relbench")
FLOAT_COLUMNS = {"t", "secs", "cpu_util_pct", "iowait_pct", "cs_per_sec", "reads_per_sec",
                 "read_mb_per_sec", "writes_per_sec", "write_mb_per_sec", "server_cpu_pct",
                 "client_cpu_pct", "other_cpu_pct", "steal_pct"}


def as_version_6(step):
    """The step as version 6 wrote it: an object a second, pretty."""
    m = step.get("metrics", {})
    cols = m.get("per_second")
    if isinstance(cols, dict):
        n = len(cols.get("t", []))
        rows = []
        for i in range(n):
            row = {}
            for k, v in cols.items():
                x = v[i] if i < len(v) else None
                if x is None:
                    continue
                row[k] = float(x) if k in FLOAT_COLUMNS else x
            rows.append(row)
        m["per_second"] = rows
    cs = step.get("class_seconds")
    if isinstance(cs, dict):
        step["class_seconds"] = {
            k: [{"n": n, "max_us": x} for n, x in zip(v["n"], v["max_us"])]
            for k, v in cs.items()
        }
    for lat in step.get("latency", {}).values():
        lat.pop("hdr", None)
    step["schema_version"] = 6
    return json.dumps(step, indent=2, ensure_ascii=False) + "\n"


def hdr_bytes(step):
    return sum(len(lat.get("hdr", "")) + len('"hdr":"",') for lat in step.get("latency", {}).values())


def sizes(files):
    now = sum(os.path.getsize(f) for f in files)
    before = sum(len(as_version_6(json.load(open(f))).encode()) for f in files)
    hdr = sum(hdr_bytes(json.load(open(f))) for f in files)
    return now, before, hdr


def line(what, now, before, hdr):
    return (f"{what}: {before / 1e3:.1f} KB before, {now / 1e3:.1f} KB now: {before / now:.2f}x smaller "
            f"({hdr / 1e3:.1f} KB of it lossless histograms; without them {(now - hdr) / 1e3:.1f} KB, "
            f"{before / (now - hdr):.2f}x)")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--secs", type=int, default=60)
    args = ap.parse_args()
    subprocess.run(["cargo", "build", "--release", "-q"], cwd=ROOT, check=True)
    work = tempfile.mkdtemp(prefix="relbench-step-size-")
    try:
        quick = os.path.join(work, "quick")
        subprocess.run([BIN, "run", "-q", "--out", quick], check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        files = glob.glob(os.path.join(quick, "steps", "*", "*.json"))
        print(line(f"quick plan, {len(files)} step files", *sizes(files)))
        long = os.path.join(work, "long")
        subprocess.run([BIN, "run", "-q", "--sqlite", os.path.join(work, "long.db"), "--load",
                        "--workload", "point-query", "--clients", "10",
                        "--time", f"{args.secs}s", "--warmup", "1s", "--out", long],
                       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        f = glob.glob(os.path.join(long, "steps", "*", "*point-query*.json"))[0]
        step = json.load(open(f))
        print(line(f"one {args.secs} s step at 10 clients ({len(step.get('retried', []))} retried "
                   f"window(s) kept in it)", *sizes([f])))
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
