#!/usr/bin/env python3
"""Writes the A/A fixture the history's tests draw series from: every
repeat's throughput of each copy of one target, per step, from a real
run of a plan with `copies` (identical configurations run interleaved),
and the A/A floor the run's report computed for each step.

    relbench run PLAN --out DIR        # one target with copies = 5, repeats = 6
    python3 bench/history_aa_fixture.py DIR > tests/fixtures/history/aa.json

The fixture in the repository was made from tests/fixtures/history/aa-plan.toml
on the 2-core Debian 12 machine the tests run on.
"""

import json
import os
import sys


def main():
    d = sys.argv[1]
    report = json.load(open(os.path.join(d, "report.json")))
    floors = {(r["seq"], r["clients"]): r.get("noise_floor") for r in report["rows"]}
    steps = {}
    for target in sorted(os.listdir(os.path.join(d, "steps"))):
        for f in sorted(os.listdir(os.path.join(d, "steps", target))):
            s = json.load(open(os.path.join(d, "steps", target, f)))
            if s.get("failed") or s["kind"]["kind"] != "workload":
                continue
            inter = s.get("metrics", {}).get("interference") or {}
            name = f.split("-", 2)[2].rsplit("-c", 1)[0]
            e = steps.setdefault(name, {"step": name, "floor": floors.get((s["seq"], s["clients"])), "targets": {}})
            e["targets"].setdefault(target, []).append(
                {"throughput": s["throughput"], "disturbed": (inter.get("others_share_pct") or 0) >= 5.0})
    out = {"source": "bench/history_aa_fixture.py over a run of tests/fixtures/history/aa-plan.toml",
           "steps": [{"step": e["step"], "floor": e["floor"],
                      "targets": [[r["throughput"] for r in reps] for reps in e["targets"].values()],
                      "disturbed": [[r["disturbed"] for r in reps] for reps in e["targets"].values()]}
                     for e in steps.values()]}
    json.dump(out, sys.stdout, indent=1)
    print()


if __name__ == "__main__":
    main()
