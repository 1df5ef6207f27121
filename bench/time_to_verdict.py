#!/usr/bin/env python3
"""Time to verdict: one study run with fixed repeats and again adaptively
(`repeats = "auto"`), in turn, and how their verdicts and wall times
compare.

The study has real changes and A/A copies: SQLite configurations against
a default base with `copies = 2` (WAL, no fsync, a memory map, a tiny page
cache, and one target identical to the base), and, with --engines
sqlite,mariadb, Debian's MariaDB with a 256 MB buffer pool (copies = 2)
against one of 6 MB, in a comparison of its own. The fixed run measures
every step --fixed times; the adaptive one at least 2 and at most
--fixed times, adding repeats only where a cell's verdict is still open.
Both use the same windows (--secs).

A cell's verdict is the report's (`report.json` rows[].cells[].verdict):
slower, faster or same (a change within the A/A floor counts as same);
anything else (not significant, untested, disturbed, too short, not
steady) is not judged. Agreement is counted over the cells the fixed run
judged. The bar (issue 50): the same verdict on at least 95% of them, in at
most 40% of the fixed run's time.

Usage: python3 bench/time_to_verdict.py [--engines sqlite,mariadb]
       [--fixed 6] [--secs 2] [--pairs 1] [--relbench PATH]
       [--reuse-fixed DIR --fixed-secs S]   (an earlier fixed run of the
       same study, re-reported with this script's comparisons, and the
       time it took: only the adaptive run is run)
       [--against DIR]   (another fixed run of the same study: how often
       two fixed runs agree, the stability the adaptive run's agreement
       is to be read against)
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
STEPS = ["load", "point-query", "range-covered-pk", "read-only-100", "update-index", "insert"]

SQLITE = """
[[target]]
name = "base"
engine = "sqlite"
copies = 2

[[target]]
name = "wal"
engine = "sqlite"
[target.pragmas]
journal_mode = "wal"

[[target]]
name = "nosync"
engine = "sqlite"
[target.pragmas]
synchronous = "off"

[[target]]
name = "mmap"
engine = "sqlite"
[target.pragmas]
mmap_size = "268435456"

[[target]]
name = "tiny-cache"
engine = "sqlite"
[target.pragmas]
cache_size = "-64"

[[target]]
name = "same"
engine = "sqlite"
"""

MARIADB = """
[[target]]
name = "bp256"
engine = "mariadb"
basedir = "/usr"
copies = 2
args = ["--innodb-buffer-pool-size=256M"]

[[target]]
name = "bp6"
engine = "mariadb"
basedir = "/usr"
args = ["--innodb-buffer-pool-size=6M"]
"""


def plan(engines, repeats, secs, seed):
    steps = ", ".join(f'"{s}"' for s in STEPS)
    head = (
        f"steps = [{steps}]\nclients = [1]\nseed = {seed}\n"
        f"[scale]\nrows = 50000\n"
        f'[duration]\nwarmup = "300ms"\nread = "{secs}s"\nwrite = "{secs}s"\n'
        # Each run keeps the cells it measured; a disturbed window is not
        # measured again, so both runs have the same chances.
        f"[interference]\nretries = 0\n"
    )
    if repeats == "auto":
        head = f'repeats = "auto"\n' + head + f"[adaptive]\nmin = 2\nmax = {FIXED}\n"
    else:
        head = f"repeats = {repeats}\n" + head
    targets = (SQLITE if "sqlite" in engines else "") + (MARIADB if "mariadb" in engines else "")
    return head + comparisons(engines) + targets


def comparisons(engines):
    """The study's `[[comparison]]` tables: one per engine when both run."""
    if not ("sqlite" in engines and "mariadb" in engines):
        return ""
    return (
        '[[comparison]]\ntitle = "SQLite settings"\nbase = "base"\n'
        # The copies in each comparison: its A/A windows are what the
        # floor and the adaptive rule's variance come from.
        'targets = ["base", "base-aa2", "wal", "nosync", "mmap", "tiny-cache", "same"]\n'
        '[[comparison]]\ntitle = "MariaDB buffer pool"\nbase = "bp256"\n'
        'targets = ["bp256", "bp256-aa2", "bp6"]\n'
    )


JUDGED = {"worse": "slower", "better": "faster", "same": "same"}


def verdicts(out):
    """{(base, target, step): verdict or None} over every comparison of the
    run's report.json (one report, or `{"comparisons": [...]}`)."""
    found = {}
    doc = json.loads((out / "report.json").read_text())
    reports = [c["report"] for c in doc["comparisons"]] if "comparisons" in doc else [doc]
    for r in reports:
        names = [t["name"] for t in r["targets"]]
        for row in r["rows"]:
            if row.get("group") == "load":
                continue
            kind = row["step"]["kind"]
            step = kind.get("workload") or kind.get("kind") if isinstance(kind, dict) else str(kind)
            for i, c in enumerate(row["cells"]):
                name = names[i]
                if name == r["base"] or "-aa" in name or c.get("relative") is None:
                    continue
                found[(r["base"], name, step)] = JUDGED.get(c.get("verdict"))
    return found


def rereport(run_dir, engines, tmp, name):
    """The verdicts of an existing run, reported with this study's
    comparisons."""
    config = tmp / "comparisons.toml"
    config.write_text(comparisons(engines))
    args_ = ["--config", str(config)] if comparisons(engines) else []
    subprocess.run([str(RELBENCH_USED), "report", str(run_dir), *args_,
                    "--format", "json", "--out", str(tmp / name)],
                   check=True, capture_output=True)
    return verdicts(tmp / name)


def agreement(reference, other):
    """(cells `reference` judged, how many of them `other` judged alike)."""
    judged = [k for k, v in reference.items() if v is not None]
    return len(judged), sum(other.get(k) == reference[k] for k in judged)


def run(plan_text, out, tmp):
    p = tmp / f"{out.name}.toml"
    p.write_text(plan_text)
    t0 = time.monotonic()
    r = subprocess.run([str(RELBENCH_USED), "run", "-q", str(p), "--out", str(out)],
                       capture_output=True, text=True)
    secs = time.monotonic() - t0
    if r.returncode not in (0, 3):
        sys.exit(f"{out.name} failed ({r.returncode}):\n{r.stderr}")
    return secs, r.stderr


def main():
    global FIXED, RELBENCH_USED
    ap = argparse.ArgumentParser()
    ap.add_argument("--engines", default="sqlite")
    ap.add_argument("--fixed", type=int, default=6)
    ap.add_argument("--secs", type=float, default=2)
    ap.add_argument("--pairs", type=int, default=1)
    ap.add_argument("--relbench", default=str(RELBENCH))
    ap.add_argument("--reuse-fixed")
    ap.add_argument("--fixed-secs", type=float)
    ap.add_argument("--against")
    args = ap.parse_args()
    FIXED = args.fixed
    RELBENCH_USED = Path(args.relbench)
    if args.relbench == str(RELBENCH):
        subprocess.run(["cargo", "build", "--release", "-q"], cwd=ROOT, check=True)
    engines = args.engines.split(",")
    tmp = Path(tempfile.mkdtemp(prefix="relbench-ttv-"))
    tmp.chmod(0o755)
    rows = []
    for pair in range(args.pairs):
        # In turn: fixed then adaptive, then adaptive then fixed, so a
        # drift of the machine does not favour one.
        order = ["fixed", "adaptive"] if pair % 2 == 0 else ["adaptive", "fixed"]
        got = {}
        for kind in order:
            repeats = args.fixed if kind == "fixed" else "auto"
            out = tmp / f"{kind}-{pair}"
            if kind == "fixed" and args.reuse_fixed:
                got[kind] = (args.fixed_secs,
                             rereport(Path(args.reuse_fixed), engines, tmp, "fixed-report"), "")
                continue
            secs, said = run(plan(engines, repeats, args.secs, 500 + pair), out, tmp)
            got[kind] = (secs, verdicts(out), said)
            print(f"pair {pair + 1}: {kind} took {secs:.0f} s", file=sys.stderr)
        (fs, fv, _), (as_, av, asaid) = got["fixed"], got["adaptive"]
        n, same = agreement(fv, av)
        rows.append((pair, fs, as_, n, same, fv, av))
        ev = rereport(Path(args.against), engines, tmp, f"against-{pair}") if args.against else {}
        print(f"\npair {pair + 1}: verdicts (fixed {args.fixed} repeats vs adaptive 2..{args.fixed}"
              + (", and the other fixed run" if args.against else "") + ")")
        print(f"  {'comparison':10} {'target':11} {'step':18} {'fixed':>8} {'adaptive':>9}"
              + (f" {'fixed #2':>9}" if args.against else ""))
        for k in sorted(fv):
            mark = "" if fv[k] is None or av.get(k) == fv[k] else "  <- differs"
            other = f" {ev.get(k) or '—':>9}" if args.against else ""
            print(f"  {k[0]:10} {k[1]:11} {k[2]:18} {fv[k] or '—':>8} {av.get(k) or '—':>9}{other}{mark}")
        if args.against:
            # Both ways: each fixed run's judged cells, and how many of
            # them the other fixed run, and the adaptive one, judged alike.
            for name, ref, second in (("fixed", fv, ev), ("fixed #2", ev, fv)):
                n_ref, other = agreement(ref, second)
                _, adaptive = agreement(ref, av)
                print(f"  of the {n_ref} cells {name} judged: the other fixed run agrees on {other} "
                      f"({100 * other / max(n_ref, 1):.1f}%), the adaptive run on {adaptive} "
                      f"({100 * adaptive / max(n_ref, 1):.1f}%)")
        for line in asaid.splitlines():
            if "adaptive" in line:
                print("  " + line.strip()[:200])
    print("\n  pair  fixed s  adaptive s  time ratio  judged by fixed  same verdict  agreement")
    for pair, fs, as_, n, s, _, _ in rows:
        print(f"  {pair + 1:4} {fs:8.0f} {as_:11.0f} {as_ / fs:11.2f} {n:16} {s:13} {100 * s / max(n, 1):9.1f}%")
    fs = sum(r[1] for r in rows)
    as_ = sum(r[2] for r in rows)
    n = sum(r[3] for r in rows)
    s = sum(r[4] for r in rows)
    print(f"  all  {fs:8.0f} {as_:11.0f} {as_ / fs:11.2f} {n:16} {s:13} {100 * s / max(n, 1):9.1f}%")
    ok = as_ / fs <= 0.40 and s >= 0.95 * n
    print(f"\nbar: at most 40% of the time and at least 95% of the verdicts the same: "
          f"{'met' if ok else 'NOT met'}")


if __name__ == "__main__":
    main()
