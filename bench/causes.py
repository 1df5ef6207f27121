#!/usr/bin/env python3
"""Known causes: does the leading cause of each verdict name the change made?

Each pair of the corpus (tests/fixtures/known_causes.toml) is a base and
a target that differ by one thing whose effect an expert knows in advance (a log synced per commit, a plan forced off
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
    python3 bench/causes.py --only mariadb-binlog-sync,pg-plan-off-index
    python3 bench/causes.py --auto 8             # rounds added to an undecided pair, up to 8
    python3 bench/causes.py --check              # the corpus and its plans, nothing run

Usage: python3 bench/causes.py [--only NAME,...] [--repeats 3] [--secs 2]
       [--auto MAX] [--relbench PATH] [--keep DIR] [--check]
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RELBENCH = ROOT / "target" / "release" / "relbench"
CORPUS = ROOT / "tests" / "fixtures" / "known_causes.toml"
PG = "/usr/lib/postgresql/15"
VERSIONS = Path(os.environ.get("RELBENCH_VERSIONS", "/var/cache/relbench/versions"))


def corpus():
    return {p["name"]: p for p in tomllib.loads(CORPUS.read_text())["pair"]}


def target(name, side):
    """A side of a pair as a plan's [[target]]."""
    engine = side["engine"]
    out = f'[[target]]\nname = "{name}"\nengine = "{engine}"\n'
    basedir = {"mariadb": "/usr", "postgres": PG}.get(engine)
    if "build" in side:
        basedir = str(VERSIONS / side["build"])
    if basedir:
        out += f"basedir = {json.dumps(basedir)}\n"
    if side.get("args"):
        out += f"args = {json.dumps(side['args'])}\n"
    if side.get("pragmas"):
        out += "[target.pragmas]\n" + "".join(
            f"{k} = {json.dumps(v)}\n" for k, v in side["pragmas"].items())
    return out


def plan(pair, repeats, secs, seed, auto=None):
    """A pair's one-step study: `repeats` rounds (the pair's own where it
    sets them), or with `auto` = max, `repeats = "auto"` from that many
    up to max, rounds added to an undecided cell alone."""
    repeats = pair.get("repeats", repeats)
    clients = pair.get("clients", 1)
    internals = pair.get("internals") or {}
    step, rows = pair["step"], pair["rows"]
    inner = "".join(f"{k} = {json.dumps(v)}\n" for k, v in internals.items())
    rounds = f'"auto"\n[adaptive]\nmin = {repeats}\nmax = {max(auto, repeats)}' if auto else repeats
    return (
        f'steps = ["load", "{step}"]\nclients = [{clients}]\nseed = {seed}\nrepeats = {rounds}\n'
        f"[scale]\nrows = {rows}\n"
        f'[duration]\nwarmup = "500ms"\nread = "{secs}s"\nwrite = "{secs}s"\n'
        + (f"[internals]\n{inner}" if inner else "")
        + target("base", pair["base"]) + target("t", pair["target"])
    )


def check(pairs, relbench, tmp):
    """The corpus's shape, and every pair's plan as `relbench check` sees it."""
    bad = []
    if len(pairs) < 12:
        bad.append(f"{len(pairs)} pairs, fewer than 12")
    engines = {p["target"]["engine"] for p in pairs.values()}
    for e in ("sqlite", "mariadb", "mysql", "postgres"):
        if e not in engines:
            bad.append(f"no pair on {e}")
    held = sum(1 for p in pairs.values() if p.get("held_out"))
    if not 0 < held < len(pairs):
        bad.append(f"{held} pairs held out of {len(pairs)}: some must be, not all")
    # The kinds are relbench's own (CauseKind): tests/internals.rs checks
    # them against the enum.
    for name, p in pairs.items():
        if not all(word for _, word in p["expect"]):
            bad.append(f"{name}: an expected cause without the word it must hold")
        if p["base"]["engine"] != p["target"]["engine"]:
            bad.append(f"{name}: its sides are different engines")
        path = tmp / f"{name}.toml"
        path.write_text(plan(p, 3, 2.0, 7000))
        r = subprocess.run([relbench, "check", str(path)], capture_output=True, text=True)
        if r.returncode != 0:
            bad.append(f"{name}: relbench check refused its plan: {r.stderr.strip()[-600:]}")
    for b in bad:
        print(b)
    print(f"{len(pairs)} pairs ({held} held out) on {', '.join(sorted(engines))}: "
          f"{'every plan checks' if not bad else f'{len(bad)} problems'}")
    return 1 if bad else 0


def lead(report, step):
    s = next(x for x in report["summary"] if x["target"] == "t")
    for k in ("regressions", "improvements", "untested_changes"):
        for c in s.get(k) or []:
            if c["step"] == step:
                return c
    return None


def verdict(report, step):
    """The target's verdict and ratio on the step; none where the report
    has no row of it (every window of the step failed: the report's
    problems say why)."""
    row = next((r for r in report["rows"] if r["step"]["kind"].get("workload") == step), None)
    if row is None or len(row["cells"]) < 2:
        return None, None
    c = row["cells"][1]
    return c.get("verdict"), c.get("relative")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--only")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--secs", type=float, default=2.0)
    ap.add_argument("--auto", type=int, metavar="MAX",
                    help='repeats = "auto": --repeats rounds, then rounds added to an undecided '
                         'cell up to MAX (what a user does on a host whose rounds spread)')
    ap.add_argument("--relbench", default=str(RELBENCH))
    ap.add_argument("--keep")
    ap.add_argument("--check", action="store_true",
                    help="check the corpus and every pair's plan (relbench check), run nothing")
    args = ap.parse_args()
    pairs = corpus()
    if args.check:
        with tempfile.TemporaryDirectory(prefix="relbench-causes-") as t:
            return check(pairs, args.relbench, Path(t))
    if args.relbench == str(RELBENCH):
        subprocess.run(["cargo", "build", "--release", "-q"], cwd=ROOT, check=True)
    tmp = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="relbench-causes-"))
    tmp.mkdir(parents=True, exist_ok=True)
    names = args.only.split(",") if args.only else list(pairs)
    results = []
    longest = (0, "")
    for i, name in enumerate(names):
        pair = pairs[name]
        step, expected, held = pair["step"], pair["expect"], pair.get("held_out", False)
        p = tmp / f"{name}.toml"
        p.write_text(plan(pair, args.repeats, args.secs, 7000 + i, args.auto))
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
