#!/usr/bin/env python3
"""Known causes: does the leading cause of each verdict name the change made?

Each pair is a base and a target that differ by one thing whose effect
an expert knows in advance (a log synced per commit, a plan forced off
its index, a cache too small, a lock taken per statement, ...). Each is
run as a small study (one step, 1 client, --repeats rounds of --secs
windows, the engine's waits read), and the leading cause the summary
gives the step (report.json: `summary[].regressions|improvements|
untested_changes[].cause.ranked[0]`) is checked against what an expert
would name: its kind and a word it must hold. The bar (the causes issue):
the top-ranked cause is the expected one in at least 11 of 12 pairs,
each pair's verdict *changed*; the held-out pairs (those no rule was
written or tuned for) reported apart. The longest sentence is printed
too (the bar: at most 400 characters).

    python3 bench/causes.py                      # every pair
    python3 bench/causes.py --only mariadb-binlog,pg-plan

Usage: python3 bench/causes.py [--only NAME,...] [--repeats 3] [--secs 2]
       [--relbench PATH] [--keep DIR]
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
PG = "/usr/lib/postgresql/15"


def sqlite(name, **pragmas):
    body = "".join(f'{k} = "{v}"\n' for k, v in pragmas.items())
    return f'[[target]]\nname = "{name}"\nengine = "sqlite"\n[target.pragmas]\n{body}'


def mariadb(name, *args):
    a = ", ".join(json.dumps(x) for x in args)
    return f'[[target]]\nname = "{name}"\nengine = "mariadb"\nbasedir = "/usr"\nargs = [{a}]\n'


def postgres(name, *settings):
    a = ", ".join(json.dumps(x) for s in settings for x in ("-c", s))
    return f'[[target]]\nname = "{name}"\nengine = "postgres"\nbasedir = "{PG}"\nargs = [{a}]\n'


WAL = {"journal_mode": "wal", "synchronous": "normal"}

# name: (step, rows, base, target, internals, [(kind, word), ...] any of
# which is the expected lead, held out: no rule was written or tuned
# for it[, {"repeats": N, "clients": N} where the change is small]).
PAIRS = {
    "sqlite-sync-full": ("update-index", 20000, sqlite("base", **WAL),
                         sqlite("t", journal_mode="wal", synchronous="full"), "",
                         [("setting", "synchronous"), ("profile", "fsync")], False),
    "sqlite-rollback-journal": ("update-index", 20000, sqlite("base", **WAL),
                                sqlite("t", journal_mode="delete", synchronous="normal"), "",
                                [("setting", "journal_mode")], False),
    # With the rollback journal a read takes and drops a shared file lock
    # around every statement unless the connection holds it (with WAL
    # there is none to take: 1.01 measured).
    "sqlite-lock-per-statement": ("point-query", 20000,
                                  sqlite("base", locking_mode="exclusive", journal_mode="delete"),
                                  sqlite("t", locking_mode="normal", journal_mode="delete"), "",
                                  [("setting", "locking_mode")], False),
    "sqlite-small-cache": ("random-points-100", 20000, sqlite("base", **WAL),
                           sqlite("t", cache_size="10", **WAL), "",
                           [("setting", "cache_size")], False),
    "mariadb-binlog-sync": ("update-index", 20000, mariadb("base"),
                            mariadb("t", "--log-bin=binlog", "--sync-binlog=1"),
                            "[internals]\nperformance_schema = true\n",
                            [("waits", "binlog"), ("setting", "log_bin"), ("setting", "sync_binlog")],
                            False),
    "mariadb-redo-flush": ("update-index", 20000,
                           mariadb("base", "--innodb-flush-log-at-trx-commit=2"),
                           mariadb("t", "--innodb-flush-log-at-trx-commit=1"),
                           "[internals]\nperformance_schema = true\n",
                           [("waits", "innodb_log_file"),
                            ("setting", "innodb_flush_log_at_trx_commit")], False),
    "mariadb-general-log": ("point-query", 20000, mariadb("base"),
                            mariadb("t", "--general-log=ON", "--general-log-file=general.log"), "",
                            [("setting", "general_log")], False, {"repeats": 6, "clients": 2}),
    "mariadb-small-buffer-pool": ("point-query", 200000, mariadb("base"),
                                  mariadb("t", "--innodb-buffer-pool-size=6M"),
                                  "[internals]\nperformance_schema = true\n",
                                  [("setting", "innodb_buffer_pool_size"),
                                   ("waits", "innodb_data_file")], True),
    "mariadb-performance-schema": ("point-query", 20000,
                                   mariadb("base", "--performance-schema=OFF"),
                                   mariadb("t", "--performance-schema=ON",
                                           "--performance-schema-instrument=%=ON",
                                           "--performance-schema-consumer-events-waits-current=ON",
                                           "--performance-schema-consumer-events-waits-history=ON",
                                           "--performance-schema-consumer-events-waits-history-long=ON",
                                           "--performance-schema-consumer-events-statements-history=ON"),
                                   "", [("setting", "performance_schema")], True, {"repeats": 6}),
    "pg-synchronous-commit": ("update-index", 20000, postgres("base", "synchronous_commit=off"),
                              postgres("t", "synchronous_commit=on"),
                              "[internals]\nwait_sampling = \"10ms\"\n",
                              [("waits", "WAL"), ("setting", "synchronous_commit")], False),
    "pg-plan-off-index": ("point-query", 20000, postgres("base"),
                          postgres("t", "enable_indexscan=off", "enable_bitmapscan=off"), "",
                          [("plan", "Seq Scan")], False),
    "pg-small-shared-buffers": ("random-points-100", 200000, postgres("base"),
                                postgres("t", "shared_buffers=128kB"), "",
                                [("setting", "shared_buffers")], True),
    "pg-log-every-statement": ("point-query", 20000, postgres("base"),
                               postgres("t", "log_statement=all", "logging_collector=on"), "",
                               [("setting", "log_statement")], True, {"repeats": 6, "clients": 2}),
}


def plan(pair, repeats, secs, seed):
    step, rows, base, target, internals = pair[:5]
    extra = pair[7] if len(pair) > 7 else {}
    repeats = extra.get("repeats", repeats)
    clients = extra.get("clients", 1)
    return (
        f'steps = ["load", "{step}"]\nclients = [{clients}]\nrepeats = {repeats}\nseed = {seed}\n'
        f"[scale]\nrows = {rows}\n"
        f'[duration]\nwarmup = "500ms"\nread = "{secs}s"\nwrite = "{secs}s"\n'
        f"{internals}{base}{target}"
    )


def lead(report, step):
    s = next(x for x in report["summary"] if x["target"] == "t")
    for k in ("regressions", "improvements", "untested_changes"):
        for c in s.get(k) or []:
            if c["step"] == step:
                return c
    return None


def verdict(report, step):
    row = next(r for r in report["rows"] if r["step"]["kind"].get("workload") == step)
    c = row["cells"][1]
    return c.get("verdict"), c.get("relative")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--only")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--secs", type=float, default=2.0)
    ap.add_argument("--relbench", default=str(RELBENCH))
    ap.add_argument("--keep")
    args = ap.parse_args()
    if args.relbench == str(RELBENCH):
        subprocess.run(["cargo", "build", "--release", "-q"], cwd=ROOT, check=True)
    tmp = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="relbench-causes-"))
    tmp.mkdir(parents=True, exist_ok=True)
    names = args.only.split(",") if args.only else list(PAIRS)
    results = []
    longest = (0, "")
    for i, name in enumerate(names):
        pair = PAIRS[name]
        step, expected, held = pair[0], pair[5], pair[6]
        p = tmp / f"{name}.toml"
        p.write_text(plan(pair, args.repeats, args.secs, 7000 + i))
        out = tmp / name
        t0 = time.monotonic()
        r = subprocess.run([args.relbench, "run", "-q", str(p), "--out", str(out)],
                           capture_output=True, text=True)
        secs = time.monotonic() - t0
        if r.returncode not in (0, 3) or not (out / "report.json").exists():
            print(f"{name}: run failed ({r.returncode}): {r.stderr[-400:]}", flush=True)
            results.append((name, held, False, "failed"))
            continue
        report = json.loads((out / "report.json").read_text())
        v, rel = verdict(report, step)
        if v is None and report.get("problems"):
            why = report["problems"][0]["message"].splitlines()
            print(f"{name}: {why[0][:200]} … {why[-1][:200] if len(why) > 1 else ''}", flush=True)
        change = lead(report, step)
        ranked = ((change or {}).get("cause") or {}).get("ranked") or []
        top = ranked[0] if ranked else {}
        kind, names_ = top.get("kind", "-"), top.get("names", "")
        ok = v in ("worse", "better") and any(kind == k and w in names_ for k, w in expected)
        for s in report.get("summary_lines") or []:
            for d in s.get("details") or []:
                if len(d) > longest[0]:
                    longest = (len(d), d)
        share = top.get("share")
        share = f" ({share * 100:.0f}%)" if share is not None else ""
        print(f"{name:<28} {step:<17} {v or '-':<9} {rel or 0:6.2f}  {'ok  ' if ok else 'MISS'} "
              f"{kind}{share}: {names_[:110]}  [{secs:.0f} s]", flush=True)
        results.append((name, held, ok, kind))
    print()
    for label, group in (("tuned on", [x for x in results if not x[1]]),
                         ("held out", [x for x in results if x[1]])):
        if group:
            print(f"{label}: {sum(1 for x in group if x[2])} of {len(group)} led by the expected cause")
    print(f"all: {sum(1 for x in results if x[2])} of {len(results)}")
    print(f"longest sentence: {longest[0]} characters")
    print(f"kept: {tmp}")


if __name__ == "__main__":
    sys.exit(main())
