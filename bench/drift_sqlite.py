#!/usr/bin/env python3
"""The machine's own wander, seen by SQLite point queries and by
`relbench host drift` (issue 59).

Identical SQLite targets measured in turn lay 10-30% apart window by
window on the project's 2-vCPU VM, with no per-copy level: the copies
took turns being fast. This takes relbench out of the question: Python's
sqlite3 runs point queries on one connection, pinned to one CPU, and
counts them per second; the seconds are then summed into windows of 1 s
to 60 s, and the spread of windows, and of two neighbouring windows'
ratio (what a base and a target taking turns differ by), is printed per
window length. Then the same on two CPUs at once (a file each), to see
whether running both sides at once (duet benchmarking) would pair closer
than taking turns. Then `relbench host drift` for the same length, whose
probe is meant to say the same without a database.

Usage: python3 bench/drift_sqlite.py [--secs 240] [--relbench PATH]
"""

import argparse
import math
import os
import random
import sqlite3
import statistics as st
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def make_db(path, rows=20000):
    c = sqlite3.connect(path)
    c.execute("PRAGMA journal_mode=wal")
    c.execute("CREATE TABLE sbtest1(id INTEGER PRIMARY KEY, k INT, c TEXT, pad TEXT)")
    r = random.Random(1)
    c.executemany("INSERT INTO sbtest1 VALUES (?,?,?,?)",
                  ((i, r.randint(1, rows), "x" * 119, "y" * 59) for i in range(1, rows + 1)))
    c.commit()
    c.close()


def per_second(path, secs, start, rows=20000):
    """Point queries per second on one connection, from `start` (epoch)."""
    c = sqlite3.connect(path)
    r = random.Random(1)
    q = "SELECT c FROM sbtest1 WHERE id=?"
    while time.time() < start:
        pass
    out = []
    for k in range(secs):
        end = start + k + 1
        n = 0
        while time.time() < end:
            for _ in range(200):
                c.execute(q, (r.randint(1, rows),)).fetchone()
            n += 200
        out.append(n)
    return out


def windows(seconds, w):
    return [math.log(sum(seconds[i:i + w])) for i in range(0, len(seconds) - w + 1, w)]


def child(args):
    # python3 drift_sqlite.py --child CPU PATH SECS START: one pinned series.
    cpu, path, secs, start = int(args[0]), args[1], int(args[2]), float(args[3])
    os.sched_setaffinity(0, {cpu})
    print(" ".join(map(str, per_second(path, secs, start))))


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        return child(sys.argv[2:])
    ap = argparse.ArgumentParser()
    ap.add_argument("--secs", type=int, default=240)
    ap.add_argument("--relbench", default=os.path.join(ROOT, "target", "release", "relbench"))
    a = ap.parse_args()
    d = tempfile.mkdtemp()
    cpus = sorted(os.sched_getaffinity(0))[:2]
    paths = [os.path.join(d, f"{i}.db") for i in range(len(cpus))]
    for p in paths:
        make_db(p)
    start = time.time() + 1.0
    procs = [subprocess.Popen([sys.executable, __file__, "--child", str(c), p, str(a.secs), str(start)],
                              stdout=subprocess.PIPE, text=True) for c, p in zip(cpus, paths)]
    series = [list(map(int, pr.communicate()[0].split())) for pr in procs]
    print(f"SQLite point queries, one connection pinned to each of CPUs {cpus}, {a.secs} s, at once:")
    print(f"{'window':>8} " + " ".join(f"{'cpu ' + str(c) + ' off, apart':>20}" for c in cpus)
          + (f" {'at once':>9}" if len(cpus) > 1 else ""))
    for w in (1, 2, 5, 10, 30, 60):
        ws = [windows(s, w) for s in series]
        if min(len(x) for x in ws) < 3:
            continue
        cols = []
        for x in ws:
            steps = [x[i + 1] - x[i] for i in range(len(x) - 1)]
            cols.append(f"{st.stdev(x):>9.3f} {st.stdev(steps):>10.3f}")
        line = f"{w:>6} s " + " ".join(f"{c:>20}" for c in cols)
        if len(ws) > 1:
            n = min(len(ws[0]), len(ws[1]))
            line += f" {st.stdev([ws[0][i] - ws[1][i] for i in range(n)]):>9.3f}"
        print(line)
    print("(sd of ln: a window's spread about the CPU's mean; apart: of ln(window / the one before);"
          " at once: of ln(cpu A's window / cpu B's of the same time))")
    if os.path.exists(a.relbench):
        print(f"\nrelbench host drift --for {a.secs}s --window 2s, right after:")
        sys.stdout.flush()
        subprocess.run([a.relbench, "host", "drift", "--for", f"{a.secs}s", "--window", "2s"], check=False)


if __name__ == "__main__":
    main()
