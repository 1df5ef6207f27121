#!/usr/bin/env python3
"""TPC-C: does the server do go-tpc's work per transaction under relbench?

Starts one private MariaDB (Debian's 10.11, its own datadir and port,
InnoDB with a buffer pool that holds the data and the redo flushed once a
second, so that the figures are the statements' CPU, not fsync), then for
each tool on the same server, one after the other in rounds:

  go-tpc v1.0.7 (pingcap/go-tpc from the Go module proxy: `./test`
  installs it in /var/cache/relbench/go-tpc, or pass --go-tpc):
      go-tpc tpcc prepare, then go-tpc tpcc run --count N
  relbench (target/release/relbench, a URL target on the same server):
      tpcc.load, then tpcc.run with transactions = N

One warehouse at the specification's population (go-tpc has no smaller
one), one client each (go-tpc's `--threads 1`), so that no lock wait is
measured as work. Around each run phase it reads the server's CPU from
/proc (utime + stime of mariadbd) and SHOW GLOBAL STATUS, and prints per
transaction: the server's CPU (µs), Com_* and Handler_* counts; then, from
a shorter run with the general log on, the statements each transaction
type sends (every statement classified by the table and columns it names)
and the transactions' own counts as each tool reported them.

The bar (issue 64): per transaction type, the statements within 5% of
go-tpc's, and the server CPU per transaction within 5%; every difference
that remains is named in docs/guide/tpcc.md.

Usage: python3 bench/tpcc_gotpc.py [--count 20000] [--rounds 2] [--log-count 3000]
"""

import argparse
import json
import os
import re
import resource
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RELBENCH = ROOT / "target" / "release" / "relbench"
GO_TPC = Path("/var/cache/relbench/go-tpc/bin/go-tpc")
# --pin: the server on the first core, each client on the second, so that
# a client's own CPU (go-tpc's Go scheduler spins between statements) does
# not run on the server's core and slow its statements.
PIN_SERVER: list = []
PIN_CLIENT: list = []
TYPES = ["new-order", "payment", "order-status", "delivery", "stock-level"]

# Which transaction a statement belongs to, by what it names (first match).
SHAPES = [
    ("new-order", r"c_discount|d_next_o_id, d_tax|SET d_next_o_id|INTO orders|INTO new_order|FROM item|s_dist_01|UPDATE stock|INTO order_line"),
    ("payment", r"SET d_ytd|d_street_1|UPDATE warehouse|w_street_1|SELECT c_id FROM customer|c_credit_lim|SELECT c_data|c_ytd_payment|INTO history"),
    ("order-status", r"count\(c_id\)|c_balance, c_first|o_carrier_id, o_entry_d|ol_delivery_d FROM"),
    ("delivery", r"FROM new_order|DELETE FROM new_order|UPDATE orders|o_c_id FROM orders|o_d_id, o_c_id|UPDATE order_line|SUM\(ol_amount\)|c_delivery_cnt"),
    ("stock-level", r"SELECT d_next_o_id FROM district|COUNT\(DISTINCT"),
]
CONTROL = re.compile(r"^(START TRANSACTION|BEGIN|COMMIT|ROLLBACK)", re.I)
STATUS = ["Questions", "Com_select", "Com_insert", "Com_update", "Com_delete",
          "Com_stmt_execute", "Com_commit", "Com_rollback", "Handler_read_key",
          "Handler_read_next", "Handler_read_rnd_next", "Handler_write", "Handler_update",
          "Handler_delete", "Com_stmt_prepare", "Com_stmt_close", "Com_stmt_reset",
          "Bytes_received", "Bytes_sent", "Innodb_buffer_pool_read_requests"]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """A private mariadbd: started here, stopped by its pid."""

    def __init__(self, root: Path):
        self.dir = root / "mariadb"
        self.data = self.dir / "data"
        self.sock = self.dir / "sock"
        self.port = free_port()
        self.dir.mkdir()
        subprocess.run(["mariadb-install-db", "--no-defaults", f"--datadir={self.data}",
                        "--user=root", "--auth-root-authentication-method=socket",
                        "--skip-test-db"], check=True, capture_output=True)
        self.general = self.dir / "general.log"
        self.proc = subprocess.Popen(PIN_SERVER + [
            "/usr/sbin/mariadbd", "--no-defaults", f"--datadir={self.data}", "--user=root",
            f"--socket={self.sock}", f"--port={self.port}", "--bind-address=127.0.0.1",
            f"--log-error={self.dir / 'error.log'}", "--innodb-buffer-pool-size=2G",
            "--innodb-log-file-size=1G", "--innodb-flush-log-at-trx-commit=2",
            "--max-prepared-stmt-count=100000", f"--general-log-file={self.general}",
            "--general-log=0", "--skip-log-bin"])
        for _ in range(300):
            if self.sock.exists() and self.sql("SELECT 1", check=False).returncode == 0:
                break
            time.sleep(0.1)
        else:
            sys.exit(f"mariadbd did not start: {(self.dir / 'error.log').read_text()}")
        self.sql("CREATE USER bench@'127.0.0.1' IDENTIFIED BY 'bench'; "
                 "GRANT ALL ON *.* TO bench@'127.0.0.1'")

    def sql(self, text: str, check: bool = True) -> subprocess.CompletedProcess:
        return subprocess.run(["mariadb", "--no-defaults", f"--socket={self.sock}", "-uroot",
                               "-N", "-B", "-e", text], capture_output=True, text=True, check=check)

    def cpu_secs(self) -> float:
        fields = Path(f"/proc/{self.proc.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def status(self) -> dict:
        out = self.sql("SHOW GLOBAL STATUS").stdout
        return {k: float(v) for k, v in (l.split("\t") for l in out.splitlines()) if k in STATUS}

    def stop(self):
        self.proc.terminate()
        try:
            self.proc.wait(60)
        except subprocess.TimeoutExpired:
            self.proc.kill()


def children_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def measured(server: Server, run) -> tuple:
    """The server's CPU seconds, status deltas, the client's CPU seconds
    and the wall time around `run()`."""
    s0, c0, k0, t0 = server.status(), server.cpu_secs(), children_cpu(), time.time()
    counts = run()
    t1, k1, c1, s1 = time.time(), children_cpu(), server.cpu_secs(), server.status()
    delta = {k: s1[k] - s0.get(k, 0.0) for k in s1}
    delta["client CPU s"] = k1 - k0
    delta["wall s"] = t1 - t0
    return c1 - c0, delta, counts


def go_tpc(a, server: Server, command: str, count: int = 0, db: str = "tpcc_go") -> dict:
    args = PIN_CLIENT + [str(a.go_tpc), "tpcc", command, "-H", "127.0.0.1", "-P", str(server.port),
            "-U", "bench", "-p", "bench", "-D", db, "--warehouses", "1", "-T", "1"]
    if command == "run":
        args += ["--count", str(count), "--interval", "1000s"]
        if a.max_procs:
            args += ["--max-procs", str(a.max_procs)]
    r = subprocess.run(args, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"go-tpc {command} failed:\n{r.stdout}\n{r.stderr}")
    counts = {}
    # "[Summary] NEW_ORDER - Takes(s): 10.0, Count: 4521, TPM: ..."
    for m in re.finditer(r"\[Summary\] (\w+) - Takes\(s\): [\d.]+, Count: (\d+)", r.stdout):
        name = m.group(1).lower().replace("_", "-")
        if name in TYPES:
            counts[name] = counts.get(name, 0) + int(m.group(2))
    for m in re.finditer(r"\[Summary\] (\w+)_ERR - Takes\(s\): [\d.]+, Count: (\d+)", r.stdout):
        counts["errors"] = counts.get("errors", 0) + int(m.group(2))
    return counts


def relbench(a, server: Server, steps: str, count: int = 0) -> dict:
    with tempfile.TemporaryDirectory() as d:
        plan = Path(d) / "plan.toml"
        plan.write_text(
            f"steps = [{steps}]\nseed = 1\nclients = [1]\n"
            f"[tpcc]\nwarehouses = 1\nloaders = 1\ntransactions = {count}\n"
            '[duration]\nwarmup = "0s"\n'
            f'[[target]]\nname = "mariadb"\nengine = "mariadb"\n'
            f'url = "mysql://bench@127.0.0.1:{server.port}/tpcc_rb"\npassword_env = "TPCC_PW"\n')
        out = Path(d) / "out"
        r = subprocess.run(PIN_CLIENT + [str(RELBENCH), "run", "-q", str(plan), "--out", str(out)],
                           capture_output=True, text=True, env={**os.environ, "TPCC_PW": "bench"})
        if r.returncode != 0:
            sys.exit(f"relbench failed ({steps}):\n{r.stderr}")
        counts = {}
        for f in (out / "steps" / "mariadb").glob("*tpcc.run*.json"):
            step = json.loads(f.read_text())
            for t in TYPES:
                counts[t] = step["latency"].get(t, {}).get("count", 0)
            counts["errors"] = step.get("failed_events", 0)
        return counts


def statements(server: Server, run) -> dict:
    """Statements sent while `run()` ran, by transaction type, from the
    general log (prepared executions as `Execute`, text as `Query`)."""
    server.sql("SET GLOBAL general_log = 0")
    server.general.write_text("")
    server.sql("FLUSH GENERAL LOGS; SET GLOBAL general_log = 1")
    counts = run()
    server.sql("SET GLOBAL general_log = 0")
    by = {t: 0 for t in TYPES}
    control = 0
    unknown = {}
    head = re.compile(r"^\s*(?:\d{6}\s+[\d:]+\s+)?\s*\d+\s+(\w+)\s?(.*)$")
    entries = []
    for raw in server.general.read_text(errors="replace").splitlines():
        m = head.match(raw)
        if m:
            entries.append([m.group(1), m.group(2)])
        elif entries:
            # A statement over several lines (go-tpc writes some so).
            entries[-1][1] += " " + raw
    for kind, text in entries:
        if kind not in ("Execute", "Query"):
            continue
        text = text.strip()
        if CONTROL.match(text):
            control += 1
            continue
        for t, pat in SHAPES:
            if re.search(pat, text, re.I):
                by[t] += 1
                break
        else:
            key = text[:60]
            unknown[key] = unknown.get(key, 0) + 1
    return {"by": by, "control": control, "unknown": unknown, "counts": counts}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--count", type=int, default=20_000, help="transactions per measured run")
    ap.add_argument("--log-count", type=int, default=3_000, help="transactions of the run with the general log on")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--go-tpc", type=Path, default=GO_TPC)
    ap.add_argument("--max-procs", type=int, default=0, help="go-tpc's --max-procs (GOMAXPROCS); 0: Go's default, the cores")
    ap.add_argument("--own-loads", action="store_true", help="each tool runs on the data it loaded (go-tpc's load takes minutes), not both on relbench's")
    ap.add_argument("--pin", action="store_true", help="the server on core 0, the clients on core 1 (taskset)")
    a = ap.parse_args()
    if a.pin:
        PIN_SERVER.extend(["taskset", "-c", "0"])
        PIN_CLIENT.extend(["taskset", "-c", "1"])
    if not a.go_tpc.exists():
        sys.exit(f"{a.go_tpc} is not there: ./test installs go-tpc v1.0.7, or pass --go-tpc")
    subprocess.run(["cargo", "build", "--release", "-q"], cwd=ROOT, check=True)
    root = Path(tempfile.mkdtemp(prefix="tpcc-gotpc-"))
    server = Server(root)
    # Both tools on the data relbench loaded (the default), or each on
    # its own load (--own-loads: go-tpc's takes minutes).
    go_db = "tpcc_go" if a.own_loads else "tpcc_rb"
    tools = {
        "go-tpc": (lambda: go_tpc(a, server, "prepare"),
                   lambda n: (lambda: go_tpc(a, server, "run", n, go_db))),
        "relbench": (lambda: relbench(a, server, '"tpcc.load"'),
                     lambda n: (lambda: relbench(a, server, '"tpcc.run"', n))),
    }
    try:
        cpu = {t: [] for t in tools}
        status = {t: [] for t in tools}
        logged = {}
        for name, (load, run) in reversed(tools.items()):
            db = "tpcc_go" if name == "go-tpc" else "tpcc_rb"
            if name == "go-tpc" and not a.own_loads:
                print("go-tpc: runs on the data relbench loaded", flush=True)
            else:
                server.sql(f"DROP DATABASE IF EXISTS {db}; CREATE DATABASE {db}")
                t0 = time.time()
                load()
                print(f"{name}: loaded one warehouse in {time.time() - t0:.1f} s", flush=True)
            logged[name] = statements(server, run(a.log_count))
        # The same data goes on changing in both, round after round.
        for rnd in range(1, a.rounds + 1):
            for name, (_, run) in tools.items():
                secs, delta, counts = measured(server, run(a.count))
                n = sum(counts.get(t, 0) for t in TYPES)
                cpu[name].append(secs * 1e6 / n)
                status[name].append({k: v / n for k, v in delta.items()})
                print(f"round {rnd} {name:8} {n} transactions ({counts.get('errors', 0)} errors), "
                      f"server CPU {secs * 1e6 / n:7.1f} µs/transaction, client CPU "
                      f"{delta['client CPU s'] * 1e6 / n:7.1f} µs/transaction, {n / delta['wall s']:.0f} tx/s",
                      flush=True)
        print("\nstatements per transaction, by type (general log, "
              f"{a.log_count} transactions each):")
        print(f"  {'type':14} {'go-tpc':>8} {'relbench':>9} {'ratio':>7}")
        ok = True
        for t in TYPES:
            per = {}
            for name, lg in logged.items():
                c = lg["counts"].get(t, 0)
                per[name] = lg["by"][t] / c if c else float("nan")
            r = per["relbench"] / per["go-tpc"] if per["go-tpc"] else float("nan")
            within = abs(r - 1) <= 0.05
            ok &= within
            print(f"  {t:14} {per['go-tpc']:8.2f} {per['relbench']:9.2f} {r:7.3f} {'ok' if within else 'OVER 5%'}")
        for name, lg in logged.items():
            n = sum(lg["counts"].get(t, 0) for t in TYPES)
            mix = ", ".join(f"{t} {100 * lg['counts'].get(t, 0) / n:.1f}%" for t in TYPES)
            print(f"  {name}: BEGIN/COMMIT/ROLLBACK {lg['control'] / n:.2f} per transaction; mix {mix}")
            if lg["unknown"]:
                print(f"  {name}: not classified: {lg['unknown']}")
        print(f"\nper transaction, whole mix, medians over {a.rounds} round(s) of {a.count}:")
        g, r = statistics.median(cpu["go-tpc"]), statistics.median(cpu["relbench"])
        # Rounds alternate the tools, so each round's ratio is paired: the
        # machine's drift between rounds falls out of it.
        ratios = sorted(rb / gt for gt, rb in zip(cpu["go-tpc"], cpu["relbench"]))
        paired = statistics.median(ratios)
        within = abs(paired - 1) <= 0.05
        ok &= within
        print(f"  {'':22} {'go-tpc':>9} {'relbench':>9} {'ratio':>7}")
        print(f"  {'server CPU µs':22} {g:9.1f} {r:9.1f} {paired:7.3f} {'ok' if within else 'OVER 5%'}"
              f"  (the median of the rounds' ratios; they range {ratios[0]:.3f}–{ratios[-1]:.3f})")
        for k in STATUS + ["client CPU s", "wall s"]:
            # Per transaction; the client's CPU and the wall time in µs.
            scale, label = (1e6, k.replace(" s", " µs")) if k.endswith(" s") else (1.0, k)
            gv = scale * statistics.median(s.get(k, 0.0) for s in status["go-tpc"])
            rv = scale * statistics.median(s.get(k, 0.0) for s in status["relbench"])
            print(f"  {label:22} {gv:9.2f} {rv:9.2f} {rv / gv if gv else float('nan'):7.3f}")
    finally:
        server.stop()
        shutil.rmtree(root, ignore_errors=True)
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
