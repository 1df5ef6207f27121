#!/usr/bin/env python3
"""Reference figures for relbench's within-run significance test
(src/measure/within.rs), computed independently with SciPy.

Welch's t-test on two windows' per-second throughput, each side's sample
size replaced by its effective size n(1 - r1)/(1 + r1) (r1: lag-1
autocorrelation, negative taken as 0, at least 2), and Fieller's interval
of the ratio of the means at 95%.

    python3 -m venv /tmp/sp && /tmp/sp/bin/pip install scipy
    /tmp/sp/bin/python bench/within_run_reference.py

prints (p, lo, hi, df, n_eff of the target) for the fixed samples the
unit test uses.
"""
import math

from scipy import stats


def describe(x):
    n = len(x)
    m = sum(x) / n
    ss = sum((v - m) ** 2 for v in x)
    lag = sum((x[i] - m) * (x[i + 1] - m) for i in range(n - 1))
    r1 = min(max(lag / ss, 0.0), 0.99) if ss > 0 else 0.0
    return m, ss / (n - 1), max(n * (1 - r1) / (1 + r1), 2.0)


def test(target, base):
    ma, va, na = describe(target)
    mb, vb, nb = describe(base)
    sa, sb = va / na, vb / nb
    df = (sa + sb) ** 2 / (sa ** 2 / (na - 1) + sb ** 2 / (nb - 1))
    t = (ma - mb) / math.sqrt(sa + sb)
    p = 2 * stats.t.sf(abs(t), df)
    q = stats.t.ppf(0.975, df)
    a = mb * mb - q * q * sb
    b = -2 * ma * mb
    c = ma * ma - q * q * sa
    d = math.sqrt(b * b - 4 * a * c)
    return p, (-b - d) / (2 * a), (-b + d) / (2 * a), df, na


BASE = [1000, 1012, 995, 1003, 990, 1008, 1001, 997, 1010, 989]
TARGET = [1050, 1040, 1061, 1035, 1058, 1047, 1052, 1039, 1066, 1044]
DRIFT = [900, 920, 935, 950, 962, 975, 985, 993, 1000, 1006, 1010, 1013]

print("scipy", __import__("scipy").__version__)
print("t.sf(2,7)*2 =", repr(2 * stats.t.sf(2.0, 7)))
print("t.sf(1.3,3.7)*2 =", repr(2 * stats.t.sf(1.3, 3.7)))
print("t.ppf(.975,7) =", repr(stats.t.ppf(0.975, 7)))
print("t.sf(12,30)*2 =", repr(2 * stats.t.sf(12.0, 30)))
print("REFERENCE_1 =", tuple(repr(v) for v in test(TARGET, BASE)))
print("REFERENCE_2 =", tuple(repr(v) for v in test(DRIFT, BASE)))
