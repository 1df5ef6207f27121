#!/usr/bin/env python3
"""What TLS costs per operation: the same server build with `tls = "off"` and
`tls = "required"`, side by side in one relbench run.

Targets, each a managed server relbench starts on loopback:
  mysql97 / mysql97-tls   MySQL 9.7 from Debian unstable (needs
                          RELBENCH_VERSIONS, as ./test sets it: the directory
                          examples/get-versions.sh filled); MySQL makes its own
                          self-signed certificate at initialisation
  pg15 / pg15-tls         Debian's PostgreSQL 15 with ssl = on and a
                          self-signed certificate made here with openssl

Repeats interleave the targets, so a quiet or busy minute of the machine
falls on both sides. For each step it prints throughput and relbench's own
client CPU and the server's CPU per operation (both measured by relbench
from /proc over the step's window), averaged over the repeats, and the
ratio TLS / plain.

Usage: python3 bench/tls_cost.py [--secs 10] [--repeats 3] [--clients 2]
       [--engines mysql,postgres] [--relbench PATH]
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
STEPS = ["point-query", "read-only-100", "update-index"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--secs", type=int, default=10)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--clients", type=int, default=2)
    ap.add_argument("--engines", default="mysql,postgres")
    ap.add_argument("--relbench", default=str(ROOT / "target/release/relbench"))
    a = ap.parse_args()
    engines = a.engines.split(",")

    work = Path(tempfile.mkdtemp(prefix="relbench-tls-"))
    os.chmod(work, 0o755)
    targets = []
    if "mysql" in engines:
        versions = os.environ.get("RELBENCH_VERSIONS")
        if not versions or not Path(versions, "mysql-9.7/.complete").is_file():
            sys.exit("set RELBENCH_VERSIONS to the directory examples/get-versions.sh filled")
        base = Path(versions, "mysql-9.7")
        for name, tls in [("mysql97", "off"), ("mysql97-tls", "required")]:
            targets.append(
                f'[[target]]\nname = "{name}"\nengine = "mysql"\nbasedir = "{base}"\ntls = "{tls}"\n'
            )
    if "postgres" in engines:
        cert, key = work / "server.crt", work / "server.key"
        subprocess.run(
            ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
             "-subj", "/CN=localhost", "-keyout", str(key), "-out", str(cert)],
            check=True, capture_output=True,
        )
        subprocess.run(["chown", "postgres", str(cert), str(key)], check=True)
        args = f'["-c", "ssl=on", "-c", "ssl_cert_file={cert}", "-c", "ssl_key_file={key}"]'
        for name, tls in [("pg15", "off"), ("pg15-tls", "required")]:
            targets.append(
                f'[[target]]\nname = "{name}"\nengine = "postgres"\nbasedir = "/usr/lib/postgresql/15"\n'
                f'tls = "{tls}"\nargs = {args}\n'
            )
    plan = work / "plan.toml"
    plan.write_text(
        f'steps = ["load", {", ".join(json.dumps(s) for s in STEPS)}]\n'
        f"clients = [{a.clients}]\nrepeats = {a.repeats}\n"
        f"[scale]\ntables = 1\nrows = 100000\n"
        f'[duration]\nwarmup = "2s"\nread = "{a.secs}s"\nwrite = "{a.secs}s"\n\n'
        + "\n".join(targets)
    )
    out = work / "out"
    subprocess.run([a.relbench, "run", "-q", str(plan), "--out", str(out)], check=True,
                   stdout=subprocess.DEVNULL)

    def figures(target, step):
        rows = []
        for f in sorted((out / "steps" / target).glob(f"r*-{step}-c{a.clients}.json")):
            r = json.loads(f.read_text())
            if r["failed"] is None:
                m = r["metrics"]
                rows.append((r["throughput"], m["client_cpu_us_per_op"], m["server_cpu_us_per_op"]))
        return [statistics.mean(col) for col in zip(*rows)] if rows else None

    pairs = [(t, t + "-tls") for t in ["mysql97", "pg15"] if (out / "steps" / t).is_dir()]
    print(f"{a.clients} clients, {a.secs} s steps, mean of {a.repeats} interleaved repeats; "
          "CPU in µs per operation")
    print(f"{'target':<10} {'step':<14} {'ops/s':>9} {'tls ops/s':>9} {'ratio':>6}  "
          f"{'client':>7} {'tls':>7} {'ratio':>6}  {'server':>7} {'tls':>7} {'ratio':>6}")
    for plain, tls in pairs:
        for step in STEPS:
            p, t = figures(plain, step), figures(tls, step)
            if not p or not t:
                print(f"{plain:<10} {step:<14} (failed: see {out})")
                continue
            print(f"{plain:<10} {step:<14} {p[0]:>9.0f} {t[0]:>9.0f} {t[0] / p[0]:>6.2f}  "
                  f"{p[1]:>7.1f} {t[1]:>7.1f} {t[1] / p[1]:>6.2f}  "
                  f"{p[2]:>7.1f} {t[2]:>7.1f} {t[2] / p[2]:>6.2f}")
    print(f"results: {out}")


if __name__ == "__main__":
    main()
