#!/usr/bin/env python3
"""How long the history takes: `relbench history add` of a study of 20
targets x 40 steps x 3 repeats (2,400 step files, made as
bench/report_speed.py makes them: real step files, names changed), into a
new history and again (idempotent: nothing added); and `relbench history
changes` over 10,000 series x 200 builds x 3 repeats.

The large history is written straight into the store's tables (the
schema relbench made: `history add` of the quick run, emptied), each series
drawn from a normal of its own with 2% noise, one series in ten with a
5% step at a build of its own; relbench then reads and searches it all.

    python3 bench/history_speed.py [--source QUICK-PLAN-RUN] [--rounds 5] [--relbench PATH]

Prints the best and the median of the rounds; exits 1 if a best is 1 s or more.
"""
import argparse
import os
import random
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import report_speed  # noqa: E402
from report_speed import build, make  # noqa: E402

BIN = report_speed.BIN


def timed(cmd, rounds, before=None):
    times, out = [], ""
    for _ in range(rounds):
        if before:
            before()
        t0 = time.perf_counter()
        out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
        times.append(time.perf_counter() - t0)
    return min(times), statistics.median(times), out


def big_history(path, series, builds, repeats, source):
    # The schema as relbench makes it (`history changes` refuses a file
    # that is not a history): one run added, then emptied.
    subprocess.run([BIN, "history", "add", source, "--history", path], check=True, capture_output=True)
    db = sqlite3.connect(path)
    for t in ("cells", "figures", "changes", "series", "builds", "runs", "hosts"):
        db.execute(f"DELETE FROM {t}")
    rng = random.Random(29)
    db.executemany("INSERT INTO builds (id, name, ord, version) VALUES (?, ?, ?, ?)",
                   [(b + 1, f"v{b + 1}", b + 1, f"v{b + 1}") for b in range(builds)])
    db.executemany("INSERT INTO series (id, step, config, host, grp, unit, config_text) VALUES (?, ?, 'c', 'h', 'point', 'ops/s', '{}')",
                   [(s + 1, f"step-{s + 1} c1") for s in range(series)])
    rows = []
    for s in range(series):
        level = rng.uniform(1e3, 1e5)
        step_at = rng.randrange(10, builds - 10) if s % 10 == 0 else builds
        for b in range(builds):
            k = 0.95 if b >= step_at else 1.0
            vals = " ".join(repr(level * k * rng.gauss(1.0, 0.02)) for _ in range(repeats))
            rows.append((f"run-{b + 1}", "t", s + 1, b + 1, "x", vals, "0" * repeats, 0.02))
        if len(rows) > 200_000:
            db.executemany("INSERT INTO cells VALUES (?, ?, ?, ?, ?, ?, ?, ?)", rows)
            rows = []
    db.executemany("INSERT INTO cells VALUES (?, ?, ?, ?, ?, ?, ?, ?)", rows)
    db.commit()
    db.close()


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--source", help="results of the quick plan (default: run it)")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--series", type=int, default=10_000)
    ap.add_argument("--builds", type=int, default=200)
    ap.add_argument("--relbench", help="this binary instead of building target/release/relbench "
                    "(another build's, to compare)")
    a = ap.parse_args()
    global BIN
    if a.relbench:
        BIN = a.relbench
    else:
        build()
    work = tempfile.mkdtemp(prefix="relbench-history-speed-")
    try:
        source = a.source
        if not source:
            source = os.path.join(work, "quick")
            subprocess.run([BIN, "run", "-q", "--out", source], check=True, stdout=subprocess.DEVNULL)
        study = os.path.join(work, "study")
        files = make(source, study, 20, 3, 40)
        h = os.path.join(work, "h.sqlite")

        def fresh():
            for f in (h, h + "-wal", h + "-shm"):
                if os.path.exists(f):
                    os.remove(f)
        best, med, out = timed([BIN, "history", "add", study, "--history", h], a.rounds, fresh)
        print(f"history add of {files} step files (20 targets x 40 steps x 3 repeats) into a new history: "
              f"best {best:.3f} s, median {med:.3f} s ({out.strip()})")
        again_best, again_med, out = timed([BIN, "history", "add", study, "--history", h], a.rounds)
        print(f"  the same again: best {again_best:.3f} s, median {again_med:.3f} s ({out.strip()})")
        big = os.path.join(work, "big.sqlite")
        t0 = time.perf_counter()
        big_history(big, a.series, a.builds, 3, source)
        print(f"wrote {a.series} series x {a.builds} builds x 3 repeats in {time.perf_counter() - t0:.0f} s")
        cbest, cmed, out = timed([BIN, "history", "changes", "--history", big], a.rounds)
        print(f"history changes over {a.series} series x {a.builds} builds: best {cbest:.3f} s, median {cmed:.3f} s")
        print("  " + out.strip().splitlines()[-1])
        sys.stdout.flush()
        return 0 if best < 1.0 and cbest < 1.0 else 1
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
