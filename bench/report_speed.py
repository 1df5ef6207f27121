#!/usr/bin/env python3
"""How long `relbench report` takes over a study of 20 targets x 40 steps x
3 repeats (or --targets 100 --repeats 5: 20,000 step files), all four
formats and the text export, and its peak memory.

The results directory is made from real step files with their names
changed: a run of the built-in quick plan (two SQLite targets, 11 steps,
repeated as later occurrences up to --steps) gives the step files; each of the 20 targets takes one
source target's files (alternating), and each repeat is a copy with its
repeat number changed. The figures are real; only the names are not.
With --profiles, the quick plan runs with `[profile]` (a profiled repeat),
and every target's step gets its source step's real profile (its record
and folded stacks, renamed), so the report reads and diffs 800 profiles
and draws their flame graphs.

    python3 bench/report_speed.py                 # runs the quick plan first
    python3 bench/report_speed.py --source DIR    # a quick-plan run you have
    python3 bench/report_speed.py --profiles      # the same study, every cell profiled

Prints the best and the median of --rounds timings of the whole command.
"""
import argparse
import copy
import glob
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BIN = os.path.join(ROOT, "target", "release", "relbench")


def build():
    subprocess.run(["cargo", "build", "--release", "-q"], cwd=ROOT, check=True)


def copy_profile(source, src, label, dest, name, repeat, seq, occurrence):
    """The source's profile of step `label` (any of its repeats) as
    target `name`'s, or nothing when the source has none."""
    recs = sorted(glob.glob(os.path.join(source, "profiles", src, f"r*-*-{label}")))
    if not recs:
        return
    rec = json.load(open(recs[0]))
    stem = recs[0][: -len(".json")]
    rec.update(target=name, repeat=repeat, seq=seq, occurrence=occurrence)
    d = os.path.join(dest, "profiles", name)
    os.makedirs(d, exist_ok=True)
    new = os.path.join(d, f"r{repeat}-{seq:02d}-{label[:-len('.json')]}")
    with open(new + ".json", "w") as out:
        json.dump(rec, out)
    for ending in (".cpu.folded.gz", ".off.folded.gz"):
        shutil.copyfile(stem + ending, new + ending)


def make(source, dest, targets, repeats, steps=None):
    """A study of `targets` x `repeats` from the step files in `source`;
    with `steps`, each target's sequence is the source's, again as second,
    third, ... occurrences, cut at `steps` files."""
    info = json.load(open(os.path.join(source, "run.json")))
    src_targets = [t["name"] for t in info["plan"]["targets"]]
    plan_targets, records = [], []
    names = [f"t{i + 1:02d}" for i in range(targets)]
    for i, name in enumerate(names):
        src = src_targets[i % len(src_targets)]
        t = copy.deepcopy(next(t for t in info["plan"]["targets"] if t["name"] == src))
        t["name"] = name
        plan_targets.append(t)
        rec = next((r for r in info["targets"] if r["name"] == src), None)
        if rec:
            rec = copy.deepcopy(rec)
            rec["name"] = name
            records.append(rec)
        os.makedirs(os.path.join(dest, "steps", name))
        files = sorted(glob.glob(os.path.join(source, "steps", src, "r1-*.json")))
        wanted = steps or len(files)
        n, occurrence = 0, 0
        while n < wanted:
            occurrence += 1
            for f in files:
                if n >= wanted:
                    break
                step = json.load(open(f))
                label = os.path.basename(f).split("-", 2)[2]
                n += 1
                if steps:
                    step["seq"] = n
                    step["occurrence"] = occurrence
                copy_profile(source, src, label, dest, name, repeats + 1,
                             n if steps else int(os.path.basename(f).split("-")[1]),
                             step.get("occurrence", 1))
                for r in range(1, repeats + 1):
                    step["target"] = name
                    step["repeat"] = r
                    seq = f"{n:02d}" if steps else os.path.basename(f).split("-")[1]
                    with open(os.path.join(dest, "steps", name, f"r{r}-{seq}-{label}"), "w") as out:
                        json.dump(step, out)
    info["plan"]["targets"] = plan_targets
    info["plan"]["repeats"] = repeats
    info["plan"]["comparisons"] = []
    info["targets"] = records
    with open(os.path.join(dest, "run.json"), "w") as out:
        json.dump(info, out)
    return len(glob.glob(os.path.join(dest, "steps", "*", "*.json")))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--source", help="results of the quick plan (default: run it)")
    ap.add_argument("--targets", type=int, default=20)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--steps", type=int, default=40,
                    help="step files per target and repeat (the source's sequence again as "
                         "later occurrences)")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--profiles", action="store_true",
                    help="every target's steps with a real profile (the quick plan run with [profile])")
    args = ap.parse_args()
    build()
    work = tempfile.mkdtemp(prefix="relbench-report-speed-")
    try:
        source = args.source
        if not source:
            source = os.path.join(work, "quick")
            cmd = [BIN, "run", "-q", "--out", source]
            if args.profiles:
                plan = os.path.join(work, "quick.toml")
                with open(plan, "w") as out:
                    out.write(open(os.path.join(ROOT, "src", "plan", "quick.toml")).read())
                    out.write("\n[profile]\n")
                cmd.insert(3, plan)
            subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
        study = os.path.join(work, "study")
        files = make(source, study, args.targets, args.repeats, args.steps)
        out = os.path.join(work, "report")
        times, rss = [], []
        for _ in range(args.rounds):
            t0 = time.perf_counter()
            p = subprocess.Popen([BIN, "report", study, "--out", out],
                                 stdout=subprocess.DEVNULL)
            # The report's own peak memory (getrusage of this child alone).
            _, status, usage = os.wait4(p.pid, 0)
            times.append(time.perf_counter() - t0)
            if status != 0:
                sys.exit(f"relbench report failed ({status})")
            rss.append(usage.ru_maxrss / 1024)
        sizes = {f: os.path.getsize(os.path.join(out, f))
                 for f in os.listdir(out) if f.startswith("report.")}
        print(f"{args.targets} targets x {files // args.targets // args.repeats} step files x "
              f"{args.repeats} repeats = {files} step files")
        print(f"relbench report (md, csv, json, html, txt): best {min(times):.3f} s, "
              f"median {statistics.median(times):.3f} s over {args.rounds} rounds; "
              f"peak RSS {max(rss):.0f} MB")
        print("sizes: " + ", ".join(f"{k} {v / 1e6:.1f} MB" for k, v in sorted(sizes.items())))
        profiled = len(glob.glob(os.path.join(study, "profiles", "*", "*.json")))
        if profiled:
            print(f"with {profiled} profiles ({len(os.listdir(os.path.join(out, 'charts')))} charts written)")
        return 0 if min(times) < (2.0 if profiled else 1.0) else 1
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
