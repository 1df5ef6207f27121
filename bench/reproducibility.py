#!/usr/bin/env python3
"""Do relbench's verdicts reproduce? One study, run twice with the same
plan and seed, compared cell by cell.

The study: SQLite configurations (the rollback journal as the base; WAL
with synchronous=NORMAL and FULL, exclusive locking, a 100-page cache)
and Debian's MariaDB (a 128 MB buffer pool as the base; 1 GB, and
innodb_flush_log_at_trx_commit = 2), eight steps each: 48 cells.

Each cell of a run is *changed* (slower or faster), *the same* or
*undecided* (report.json's `verdict`: worse / better / same; everything
else is undecided). Two runs **contradict** on a cell when one says
slower and the other faster, or one says changed and the other the
same. The bar (the verdicts issue): no contradiction, and of the cells
both runs decided, at least 90% decided alike.

With --adaptive it also runs the study once with `repeats = "auto"`
(min 2, max the fixed runs' repeats) and compares it with both fixed
runs: its contradictions, its agreement, and its time against theirs.

Usage: python3 bench/reproducibility.py [--repeats 6] [--secs 1]
       [--engines sqlite,mariadb] [--adaptive] [--relbench PATH]
       [--keep DIR]
"""

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RELBENCH = ROOT / "target" / "release" / "relbench"

STEPS = ["point-query", "random-points-100", "range-covered-pk", "scan",
         "read-only-100", "update-index", "update-nonindex", "insert"]


def sqlite_target(name, pragmas):
    lines = "".join(f'{k} = "{v}"\n' for k, v in pragmas.items())
    return f'[[target]]\nname = "{name}"\nengine = "sqlite"\n[target.pragmas]\n{lines}'


def mariadb_target(name, args):
    quoted = ", ".join(f'"{a}"' for a in args)
    return f'[[target]]\nname = "{name}"\nengine = "mariadb"\nbasedir = "/usr"\nargs = [{quoted}]\n'


TARGETS = {
    "sqlite": [
        sqlite_target("default", {"journal_mode": "delete", "synchronous": "full"}),
        sqlite_target("wal", {"journal_mode": "wal", "synchronous": "normal"}),
        sqlite_target("wal-full", {"journal_mode": "wal", "synchronous": "full"}),
        sqlite_target("exclusive", {"journal_mode": "delete", "synchronous": "full",
                                    "locking_mode": "exclusive"}),
        sqlite_target("cache-100", {"journal_mode": "delete", "synchronous": "full",
                                    "cache_size": "100"}),
    ],
    "mariadb": [
        mariadb_target("bp128", ["--innodb-buffer-pool-size=128M"]),
        mariadb_target("bp1g", ["--innodb-buffer-pool-size=1G"]),
        mariadb_target("flush2", ["--innodb-buffer-pool-size=128M",
                                  "--innodb-flush-log-at-trx-commit=2"]),
    ],
}


def plan(engine, repeats, secs, seed):
    steps = ", ".join(f'"{s}"' for s in ["load", "settle"] + STEPS)
    rep = f"repeats = {repeats}" if repeats != "auto" else 'repeats = "auto"'
    adaptive = "" if repeats != "auto" else f"[adaptive]\nmin = 2\nmax = {ARGS.repeats}\n"
    return (
        f"steps = [{steps}]\nclients = [1]\n{rep}\nseed = {seed}\norder = \"{ARGS.order}\"\n{adaptive}"
        f"[scale]\nrows = 20000\n"
        f'[duration]\nwarmup = "200ms"\nread = "{secs}s"\nwrite = "{secs}s"\ninsert = "{secs}s"\n'
        f'[settle]\nbase = "0s"\nper_million_rows = "0s"\nmax = "1s"\n'
        + "".join(TARGETS[engine])
    )


def verdicts(out):
    """{(step, clients, target): (verdict, relative, interval)} of a run's report."""
    report = json.loads((out / "report.json").read_text())
    names = [t["name"] for t in report["targets"]]
    cells = {}
    for row in report["rows"]:
        kind = row["step"].get("kind", {})
        if row.get("group") in ("load", None) or kind.get("kind") != "workload":
            continue
        step = kind.get("workload")
        for i, name in enumerate(names):
            c = row["cells"][i]
            if i == report["base_of"][i] or c.get("relative") is None:
                continue
            sig = c.get("significance") or {}
            iv = sig.get("interval") or {}
            cells[(step, row["clients"], name)] = (
                c.get("verdict"), c.get("relative"), (iv.get("lo"), iv.get("hi")))
    return cells


def wall(out):
    """A kept run's wall time: its first step's start to its last step's end."""
    starts, ends = [], []
    for f in (out / "steps").glob("*/*.json"):
        j = json.loads(f.read_text())
        starts.append(j["started"])
        ends.append(j["started"] + j.get("warmup_secs", 0) + j["secs"])
    return max(ends) - min(starts) if starts else 0.0


def answer(v):
    return {"worse": "slower", "better": "faster", "same": "same"}.get(v, "undecided")


def compare(a, b, label):
    """Contradictions and agreement between two runs' cells."""
    keys = sorted(set(a) & set(b))
    contradictions, both, alike, undecided_in_one = [], 0, 0, 0
    for k in keys:
        x, y = answer(a[k][0]), answer(b[k][0])
        if "undecided" in (x, y):
            undecided_in_one += x != y
            continue
        both += 1
        if x == y:
            alike += 1
        else:
            contradictions.append((k, a[k], b[k]))
    print(f"\n{label}: {len(keys)} cells; decided in both {both}, alike {alike} "
          f"({100 * alike / max(both, 1):.1f}%), contradictions {len(contradictions)}, "
          f"decided in one only {undecided_in_one}")
    for k, x, y in contradictions:
        print(f"  CONTRADICTION {k}: {x} vs {y}")
    return len(contradictions), both, alike


def run(engine, repeats, seed, tmp, tag):
    p = tmp / f"{engine}-{tag}.toml"
    out = tmp / f"{engine}-{tag}"
    if ARGS.reuse and (out / "report.json").exists():
        info = json.loads((out / "run.json").read_text())
        took = info.get("elapsed_secs") or wall(out)
    else:
        p.write_text(plan(engine, repeats, ARGS.secs, seed))
        t0 = time.time()
        r = subprocess.run([ARGS.relbench, "run", "-q", str(p), "--out", str(out)],
                           capture_output=True, text=True)
        took = time.time() - t0
        if r.returncode not in (0, 3):
            sys.exit(f"{engine} {tag} failed:\n{r.stderr}")
    cells = verdicts(out)
    counts = {}
    for v in cells.values():
        counts[answer(v[0])] = counts.get(answer(v[0]), 0) + 1
    print(f"{engine:8} {tag:9} {took:6.0f} s: {counts}", file=sys.stderr)
    return cells, took


def main():
    global ARGS
    ap = argparse.ArgumentParser()
    ap.add_argument("--engines", default="sqlite,mariadb")
    ap.add_argument("--repeats", type=int, default=6)
    ap.add_argument("--secs", type=float, default=1.0)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--order", default="random", choices=["random", "fixed"],
                    help="the targets' order inside a round (the plan's `order`)")
    ap.add_argument("--adaptive", action="store_true")
    ap.add_argument("--relbench", default=str(RELBENCH))
    ap.add_argument("--keep", help="keep the runs' results here")
    ap.add_argument("--reuse", action="store_true",
                    help="with --keep: read the runs kept there instead of running them again")
    ARGS = ap.parse_args()
    if ARGS.relbench == str(RELBENCH):
        subprocess.run(["cargo", "build", "--release", "-q"], cwd=ROOT, check=True)
    tmp = Path(ARGS.keep) if ARGS.keep else Path(tempfile.mkdtemp(prefix="relbench-repro-"))
    tmp.mkdir(parents=True, exist_ok=True)
    # A managed server runs as its own OS user, which must reach its datadir.
    tmp.chmod(0o755)
    runs = {"first": {}, "second": {}, "adaptive": {}}
    secs = {"first": 0.0, "second": 0.0, "adaptive": 0.0}
    tags = ["first", "second"] + (["adaptive"] if ARGS.adaptive else [])
    for engine in ARGS.engines.split(","):
        for tag in tags:
            repeats = "auto" if tag == "adaptive" else ARGS.repeats
            cells, took = run(engine, repeats, ARGS.seed, tmp, tag)
            runs[tag].update({(engine,) + k: v for k, v in cells.items()})
            secs[tag] += took
    print(f"\nfixed runs: {ARGS.repeats} repeats of {ARGS.secs:g} s windows; "
          f"{secs['first']:.0f} s and {secs['second']:.0f} s")
    c, both, alike = compare(runs["first"], runs["second"], "first vs second (fixed)")
    if ARGS.adaptive:
        print(f"adaptive run: {secs['adaptive']:.0f} s "
              f"({100 * secs['adaptive'] / max(secs['first'], 1):.0f}% of the first fixed run's)")
        compare(runs["adaptive"], runs["first"], "adaptive vs first")
        compare(runs["adaptive"], runs["second"], "adaptive vs second")
    print("\ncell                                      first                   second")
    for k in sorted(runs["first"]):
        a, b = runs["first"][k], runs["second"].get(k, (None, None, (None, None)))

        def show(x):
            lo, hi = x[2]
            iv = f"({lo:.2f}–{hi:.2f})" if lo is not None else ""
            return f"{answer(x[0]):9} {x[1]:.2f} {iv}" if x[1] is not None else "—"
        print(f"  {'/'.join(map(str, k)):38} {show(a):23} {show(b)}")


if __name__ == "__main__":
    main()
