#!/usr/bin/env python3
"""Bisect on a busy host: does it ever name a wrong build with exit 0?

Eight SQLite "builds" whose point queries get several times slower from
b6 on (normal locking with a 10-page cache reads its pages again for
every statement); `relbench bisect` searches them --attempts times while
the host is busy: CPU burners that come and go (on --burn-on of every
--burn-period seconds, on every core) and, with --server, another
relbench run against Debian's MariaDB doing writes on a managed server
beside it. Each attempt's exit code and culprit line are printed; the
bar (the verdicts issue): no wrong culprit with exit 0. An exit 1, 4 or
5 (no change, unclear, unmeasured) is an honest "cannot tell".

Usage: python3 bench/bisect_busy.py [--attempts 10] [--server | --idle-server] [--burners N]
       [--burn-on 0.3] [--burn-period 1.5] [--relbench PATH]
"""

import argparse
import multiprocessing
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RELBENCH = ROOT / "target" / "release" / "relbench"


def builds_plan():
    p = ('steps = ["load", "point-query"]\nclients = [1]\nrepeats = 1\nseed = 1\n'
         '[scale]\ntables = 1\nrows = 20000\n[duration]\nwarmup = "100ms"\nread = "300ms"\n'
         '[interference]\nretries = 0\n')
    for i in range(1, 9):
        slow = i >= 6
        p += (f'[[target]]\nname = "b{i}"\nengine = "sqlite"\n[target.pragmas]\n'
              f'locking_mode = "{"normal" if slow else "exclusive"}"\n'
              + ('cache_size = "10"\n' if slow else ""))
    return p


SERVER_PLAN = ('steps = ["load", "write-only", "update-index", "insert"]\nclients = [2]\nrepeats = 50\n'
               '[scale]\nrows = 50000\n[duration]\nwarmup = "1s"\nwrite = "5s"\n'
               '[[target]]\nname = "other"\nengine = "mariadb"\nbasedir = "/usr"\n')

# A server that runs beside the bisect but is not driven: loaded, then
# left to its background work (purge, flushing) for ten minutes.
IDLE_SERVER_PLAN = ('steps = ["load", "settle"]\nclients = [1]\n'
                    '[scale]\nrows = 200000\n[settle]\nbase = "600s"\nmax = "600s"\n'
                    '[[target]]\nname = "other"\nengine = "mariadb"\nbasedir = "/usr"\n')


def burn(on, period, stop_at):
    while time.time() < stop_at:
        t0 = time.time()
        while time.time() - t0 < on:
            pass
        time.sleep(max(period - on, 0.0))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--attempts", type=int, default=10)
    ap.add_argument("--server", action="store_true")
    ap.add_argument("--idle-server", action="store_true",
                    help="the server beside is loaded, then left running without a client")
    ap.add_argument("--burners", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--burn-on", type=float, default=0.3)
    ap.add_argument("--burn-period", type=float, default=1.5)
    ap.add_argument("--relbench", default=str(RELBENCH))
    args = ap.parse_args()
    if args.relbench == str(RELBENCH):
        subprocess.run(["cargo", "build", "--release", "-q"], cwd=ROOT, check=True)
    tmp = Path(tempfile.mkdtemp(prefix="relbench-bisect-busy-"))
    tmp.chmod(0o755)
    plan = tmp / "builds.toml"
    plan.write_text(builds_plan())
    names = ",".join(f"b{i}" for i in range(1, 9))
    outcomes = []
    for attempt in range(args.attempts):
        stop_at = time.time() + 600
        burners = [multiprocessing.Process(target=burn, args=(args.burn_on, args.burn_period, stop_at))
                   for _ in range(args.burners)]
        for b in burners:
            b.start()
        server = None
        if args.server or args.idle_server:
            sp = tmp / "server.toml"
            sp.write_text(IDLE_SERVER_PLAN if args.idle_server else SERVER_PLAN)
            server = subprocess.Popen([args.relbench, "run", "-q", str(sp), "--out", str(tmp / f"server-{attempt}")],
                                      stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            time.sleep(15 if args.idle_server else 5)
        out = tmp / f"bisect-{attempt}"
        t0 = time.time()
        r = subprocess.run([args.relbench, "bisect", str(plan), "--builds", names, "--step", "point-query",
                            "--repeats", "3", "--max-repeats", "9", "--out", str(out)],
                           capture_output=True, text=True)
        took = time.time() - t0
        for b in burners:
            b.terminate()
        if server:
            server.send_signal(signal.SIGINT)
            server.wait()
        culprit = [l for l in r.stdout.splitlines() if l.startswith(("culprit:", "candidate"))]
        right = r.returncode == 0 and len(culprit) == 1 and culprit[0].startswith("culprit: b6 (after b5)")
        wrong = r.returncode == 0 and not right
        outcomes.append((r.returncode, wrong))
        print(f"attempt {attempt + 1}: exit {r.returncode} in {took:.0f} s"
              f"{' WRONG' if wrong else ''}: {culprit[0] if culprit else r.stderr.strip().splitlines()[-1]}")
    found = sum(1 for c, w in outcomes if c == 0 and not w)
    wrong = sum(1 for _, w in outcomes if w)
    beside = " beside a MariaDB writing" if args.server else " beside an idle MariaDB" if args.idle_server else ""
    print(f"\n{args.attempts} attempts, {args.burners} burner(s){beside}: "
          f"right culprit (exit 0) {found}, wrong culprit with exit 0 {wrong}, "
          f"cannot tell (exit 1/4/5) {args.attempts - found - wrong}")


if __name__ == "__main__":
    main()
