#!/usr/bin/env python3
"""LinkBench: does the server do the original's work per request?

Runs `relbench run` on LinkBench (lb.load, settle, lb.request) against a
managed MariaDB 10.11 InnoDB twice on the same data (the same seed): once
as relbench runs it by default (text on the original's two connections,
as the original's JDBC client sends it), once with `prepared = true` (the
statements themselves are the original's either way: tests/conformance.rs
checks their shapes against LinkStoreMysql). It
prints, per request, the server's CPU and the handler counters that say
how many rows the server touched (Handler_read_key, _next, _prev,
_rnd_next, Handler_write, _update, _delete), from relbench's own step
files (the server's /proc tree and SHOW GLOBAL STATUS read before and after
the step; no warm-up, so the counters cover exactly the requests counted).

The bar: every handler figure per request within 15% between the two
(the same rows read and written), which the issue this came from found at
246-263 Handler_read_prev per request against the original's 12.6-13.0
when the next page of a long list skipped the pages read with OFFSET.
Server CPU per request is printed beside: prepared statements are meant to
cost the server less (no parse per execution), so it is not held to 15%.

Usage: python3 bench/linkbench_server_work.py [--nodes 200000] [--requesters 2] [--requests 20000] [--rounds 1]
"""

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RELBENCH = ROOT / "target" / "release" / "relbench"

HANDLERS = [
    "Handler_read_key",
    "Handler_read_next",
    "Handler_read_prev",
    "Handler_read_rnd_next",
    "Handler_write",
    "Handler_update",
    "Handler_delete",
]
MODES = {"prepared": ", prepared = true", "text": ""}
# --tail: the history of lists paged again, as the original keeps it
# (removeTailCacheEntry leaves a list dropped from any place but the last
# in its index) against the corrected one; both as text.
TAIL = {"original": "", "corrected": 'tail_history = "corrected"\n'}


def run(a, mode: str) -> dict:
    step = MODES.get(mode, "")
    extra = TAIL.get(mode, "")
    with tempfile.TemporaryDirectory() as d:
        Path(d).chmod(0o755)
        plan = Path(d) / "plan.toml"
        plan.write_text(
            f'steps = ["lb.load", "settle", {{ step = "lb.request"{step} }}]\nseed = 1\n'
            f"[linkbench]\n{extra}maxid1 = {a.nodes + 1}\nloaders = 4\nrange_limit = {a.range_limit}\ngetlinklist_history = {a.history}\n"
            f"requesters = {a.requesters}\nrequests = {a.requests}\n"
            '[duration]\nwarmup = "0s"\n'
            '[[target]]\nname = "innodb"\nengine = "mariadb"\nbasedir = "/usr"\n'
            f'config = "{ROOT}/examples/configs/innodb.cnf"\n'
        )
        out = Path(d) / "out"
        r = subprocess.run(
            [str(RELBENCH), "run", "-q", str(plan), "--out", str(out)],
            capture_output=True,
            text=True,
        )
        if r.returncode != 0:
            sys.exit(f"relbench failed ({mode}):\n{r.stderr}")
        req = json.loads(next((out / "steps" / "innodb").glob("r1-03-lb.request-*.json")).read_text())
        n = req["events"]
        delta = req["metrics"]["counters"]["delta"]
        fig = {h: delta.get(h, 0.0) / n for h in HANDLERS}
        lists = sum(v for k, v in req["statements"].items() if "link_list" in k)
        fig["Handler_read_prev/list read"] = delta.get("Handler_read_prev", 0.0) / max(lists, 1)
        fig["server CPU µs"] = req["metrics"]["server_cpu_us_per_op"]
        fig["requests/s"] = req["throughput"]
        # The original's per-request figures (bench/linkbench_original.md).
        for c in ["Com_begin", "Com_commit", "Questions"]:
            fig[c] = delta.get(c, 0.0) / n
        return fig


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--nodes", type=int, default=200_000)
    ap.add_argument("--requesters", type=int, default=2)
    ap.add_argument("--requests", type=int, default=20_000)
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--range-limit", type=int, default=10_000, help="rows per link-list page (the original's 10,000; smaller pages more lists)")
    ap.add_argument("--history", type=float, default=0.3, help="percent of list reads that page a list seen full (the original's 0.3)")
    ap.add_argument("--tail", action="store_true", help="compare the lists' history as the original keeps it with the corrected one")
    a = ap.parse_args()
    modes = TAIL if a.tail else MODES
    first, second = list(modes)
    subprocess.run(["cargo", "build", "--release", "-q"], cwd=ROOT, check=True)
    figures = {m: [] for m in modes}
    for rnd in range(1, a.rounds + 1):
        for mode in modes:
            f = run(a, mode)
            figures[mode].append(f)
            print(f"round {rnd} {mode:8} " + "  ".join(f"{k} {v:.2f}" for k, v in f.items()), flush=True)
    keys = list(figures[first][0].keys())
    original = {"Com_begin": 0.0, "Com_commit": 0.3088, "Questions": 1.5018,
                "Handler_read_prev/list read": 10.33}
    med = {m: {k: statistics.median(f[k] for f in rows) for k in keys} for m, rows in figures.items()}
    print(f"\nper request, medians over {a.rounds} round(s); {a.nodes:,} nodes, {a.requesters} requesters x {a.requests:,} requests:")
    print(f"  {'figure':28} {first:>10} {second:>10} {first + '/' + second:>20}")
    ok = True
    for k in keys:
        p, t = med[first][k], med[second][k]
        ratio = p / t if t else float("nan")
        held = k in HANDLERS and t >= 0.05 and not a.tail
        verdict = ""
        if held:
            within = abs(ratio - 1) <= 0.15
            ok &= within
            verdict = "ok" if within else "OVER 15%"
        beside = f"  (the original: {original[k]:.4f})" if k in original else ""
        print(f"  {k:28} {p:10.2f} {t:10.2f} {ratio:20.3f} {verdict}{beside}")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
