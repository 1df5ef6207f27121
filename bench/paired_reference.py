#!/usr/bin/env python3
"""Reference figures for relbench's verdict test (src/measure/paired.rs),
computed independently with SciPy.

The test: per cell, the rounds' ln(target / base) differences; the cell's
variance moderated towards a prior fitted to every cell's variance by
moments of the log variances (Smyth 2004, limma's fitFDist, here with
SciPy's polygamma and a root finder instead of Newton's iteration); a t
interval at 95% on the mean difference with the cell's and the prior's
degrees of freedom, and at 90% for the two one-sided tests of equivalence.

    python3 -m venv /tmp/sp && /tmp/sp/bin/pip install scipy
    /tmp/sp/bin/python bench/paired_reference.py

prints the figures src/measure/paired/tests.rs compares with.
"""
import math

from scipy import optimize, special, stats


def fit_prior(cells):
    """cells: [(var, df)] -> (s0^2, d0), d0 capped at the cells' total df."""
    used = [(v, d) for v, d in cells if d >= 1 and v > 0]
    n = len(used)
    e = [math.log(v) - special.digamma(d / 2) + math.log(d / 2) for v, d in used]
    emean = sum(e) / n
    spread = sum((x - emean) ** 2 for x in e) / (n - 1) - sum(
        special.polygamma(1, d / 2) for _, d in used
    ) / n
    cap = sum(d for _, d in used)
    if spread > 0:
        x = optimize.brentq(lambda x: special.polygamma(1, x) - spread, 1e-8, 1e8, xtol=1e-14)
        d0 = min(2 * x, cap)
    else:
        d0 = cap
    s0 = math.exp(emean + special.digamma(d0 / 2) - math.log(d0 / 2))
    return s0, d0


def paired(d, prior, alpha=0.05):
    n = len(d)
    m = sum(d) / n
    s2 = sum((x - m) ** 2 for x in d) / (n - 1)
    s0, d0 = prior
    df = d0 + n - 1
    var = (d0 * s0 + (n - 1) * s2) / df
    se = math.sqrt(var / n)
    p = 2 * stats.t.sf(abs(m) / se, df)
    q = stats.t.ppf(1 - alpha / 2, df)
    return p, math.exp(m - q * se), math.exp(m + q * se), df


CELLS = [
    [0.533, 0.602, 0.584, 0.642],
    [0.009, -0.004, -0.001, 0.054],
    [0.285, 0.316, 0.294, 0.318],
    [0.019, 0.026, 0.011, 0.060],
    [-0.035, 0.004, -0.029, 0.016],
    [3.037, 3.225, 2.987, 3.153],
]

if __name__ == "__main__":
    print("digamma(0.5, 2.7, 13):", [float(special.digamma(x)) for x in (0.5, 2.7, 13.0)])
    print("trigamma(0.5, 2.7, 13):", [float(special.polygamma(1, x)) for x in (0.5, 2.7, 13.0)])
    print("tetragamma(0.5, 2.7, 13):", [float(special.polygamma(2, x)) for x in (0.5, 2.7, 13.0)])
    for y in (0.3, 2.0, 9.0):
        x = optimize.brentq(lambda x: special.polygamma(1, x) - y, 1e-8, 1e8, xtol=1e-14)
        print(f"trigamma_inverse({y}) = {x!r}")
    cells = []
    for d in CELLS:
        m = sum(d) / len(d)
        cells.append((sum((x - m) ** 2 for x in d) / (len(d) - 1), len(d) - 1))
    prior = fit_prior(cells)
    print("prior (s0^2, d0):", prior)
    print("cell 2 (p, lo, hi, df):", paired(CELLS[1], prior))
    print("cell 1 (p, lo, hi, df):", paired(CELLS[0], prior))
    # The two one-sided tests at 5% each: the interval at 90%.
    print("cell 2 equivalence (p, lo, hi, df):", paired(CELLS[1], prior, alpha=0.10))
