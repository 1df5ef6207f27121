#!/usr/bin/env python3
"""relbench's change points against Apache Otava's, on otava-test-data's
generated patterns, side by side.

Each pattern is generated with known change points (otava-test-data), at
two lengths and several seeds; Otava's `compute_change_points` (windowed
E-Divisive with its t-test) and relbench's search (`relbench history detect`:
the same binary segmentation, tested by rank sums, corrected for the choice
of split and for every series tested at once) see the same numbers, one per
build. A detection within TOLERANCE builds of a true change point counts
once; precision, recall and F1 are over all cases of a pattern.

Needs a Python with `apache-otava` and `otava-test-data` (the test venv
`./test` makes: /var/cache/relbench/otava-venv/bin/python). Usage:

    VENV/bin/python bench/changepoints.py [--relbench target/release/relbench]
        [--p 0.05] [--check]

--check exits 1 unless relbench's F1 over all patterns is at least Otava's.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile

import otava_test_data as g
from otava.analysis import compute_change_points

TOLERANCE = 2
LENGTHS = (50, 200)
SEEDS = range(1, 6)


def patterns(length, seed):
    """(name, TimeSeries) for one length and seed: the package's generators
    with noise, as a performance history has it."""
    mid = length // 2
    third = length // 3
    yield "constant+noise", g.noise_normal(length, mean=100.0, sigma=2.0, seed=seed)
    yield "step 20%", g.step_function(length, 100.0, 120.0, mid, sigma=5.0, seed=seed)
    yield "step 5%", g.step_function(length, 100.0, 95.0, mid, sigma=2.0, seed=seed)
    yield "regression+fix", g.regression_fix(length, 100.0, 115.0, None, third, max(8, length // 5), sigma=3.0, seed=seed)
    yield "multiple", g.multiple_changes(length, [100.0, 110.0, 95.0], [third, 2 * third], sigma=3.0, seed=seed)
    yield "outlier", g.outlier(length, 100.0, 150.0, mid, sigma=2.0, seed=seed)
    yield "banding", g.banding(length, 100.0, 105.0, sigma=1.0, seed=seed)
    yield "variance", g.variance_change(length, 100.0, 2.0, 10.0, mid, seed=seed)


def truth(ts):
    # An outlier is one bad build, not a change of level: neither method
    # should report it (otava-test-data lists it as a "change point").
    return [cp.index for cp in ts.change_points if cp.change_type != "outlier"]


def otava(values, p):
    cps, _ = compute_change_points(values, window_len=50, max_pvalue=p)
    return sorted(cp.index for cp in cps)


def relbench(binary, cases, p):
    """One call for every case: relbench corrects over all series at once."""
    doc = {"q": p, "window": 30, "series": [
        {"id": i, "builds": [[float(v)] for v in values]} for i, values in enumerate(cases)]}
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump(doc, f)
        name = f.name
    try:
        out = subprocess.run([binary, "history", "detect", name], check=True, capture_output=True, text=True).stdout
    finally:
        os.unlink(name)
    found = [[] for _ in cases]
    for x in json.loads(out)["found"]:
        found[x["series"]].append(x["build"])
    return [sorted(f) for f in found]


def score(found, true):
    used = set()
    tp = 0
    for f in found:
        hit = next((t for t in true if abs(t - f) <= TOLERANCE and t not in used), None)
        if hit is not None:
            used.add(hit)
            tp += 1
    return tp, len(found) - tp, len(true) - tp


def f1(tp, fp, fn):
    return 2 * tp / (2 * tp + fp + fn) if (tp + fp + fn) else 1.0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--relbench", default="target/release/relbench")
    ap.add_argument("--p", type=float, default=0.05)
    ap.add_argument("--check", action="store_true")
    a = ap.parse_args()
    names, cases, truths = [], [], []
    for length in LENGTHS:
        for seed in SEEDS:
            for name, ts in patterns(length, seed):
                names.append(name)
                cases.append([float(v) for v in ts.data])
                truths.append(truth(ts))
    ours = relbench(a.relbench, cases, a.p)
    theirs = [otava(c, a.p) for c in cases]
    rows = {}
    for name, t, o, r in zip(names, truths, theirs, ours):
        row = rows.setdefault(name, [[0, 0, 0], [0, 0, 0]])
        for i, found in enumerate((o, r)):
            for k, v in enumerate(score(found, t)):
                row[i][k] += v
    print(f"{len(cases)} series ({len(LENGTHS)} lengths x {len(SEEDS)} seeds per pattern), significance {a.p}, "
          f"a detection counts within {TOLERANCE} builds")
    print(f"{'pattern':16} {'otava tp/fp/fn':>16} {'F1':>5}   {'relbench tp/fp/fn':>18} {'F1':>5}")
    tot = [[0, 0, 0], [0, 0, 0]]
    for name, (o, r) in rows.items():
        for i, x in enumerate((o, r)):
            for k in range(3):
                tot[i][k] += x[k]
        print(f"{name:16} {'/'.join(map(str, o)):>16} {f1(*o):5.2f}   {'/'.join(map(str, r)):>18} {f1(*r):5.2f}")
    fo, fr = f1(*tot[0]), f1(*tot[1])
    print(f"{'all':16} {'/'.join(map(str, tot[0])):>16} {fo:5.2f}   {'/'.join(map(str, tot[1])):>18} {fr:5.2f}")
    print(f"relbench F1 / Otava F1: {fr / fo if fo else float('inf'):.2f}")
    if a.check and fr + 1e-9 < fo:
        print("relbench's F1 is below Otava's", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
