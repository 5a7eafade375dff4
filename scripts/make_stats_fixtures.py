#!/usr/bin/python3
"""Writes the SciPy reference values that tests/harness/statistics_test.cpp checks against.

Run with Debian's interpreter (python3-scipy), from the repository root:
    /usr/bin/python3 scripts/make_stats_fixtures.py
It rewrites tests/fixtures/stats/{ttest,wilcoxon,rankdata}.json. The inputs are drawn
from a fixed NumPy seed, so the output only changes when SciPy's answers change; commit
it together with the SciPy version recorded in each file.

Cases cover what the evaluation meets: small n (exact Wilcoxon), the 60-70 dataset
comparisons of Table 2 (normal approximation), zeros (dropped: zero_method="wilcox"),
tied |d| (variance correction), and normalised-accuracy-like magnitudes.
"""
import json
import os
import sys

import numpy as np
import scipy
from scipy import stats
from scipy.stats._hypotests import _get_wilcoxon_distr

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "fixtures", "stats")


def floats(a):
    return [float(v) for v in a]


def main():
    rng = np.random.default_rng(20220222)
    os.makedirs(OUT, exist_ok=True)

    # ---- paired t-test (ttest_rel, two-sided)
    tcases = []
    for name, n, shift, scale in [
        ("n5_small_effect", 5, 0.1, 1.0),
        ("n20_no_effect", 20, 0.0, 1.0),
        ("n60_normalised_acc", 60, 0.01, 0.05),
        ("n71_strong_effect", 71, 0.3, 0.2),
        ("n3_tiny", 3, 1.0, 0.5),
    ]:
        x = rng.normal(0.0, scale, n)
        y = x - shift + rng.normal(0.0, scale, n)
        r = stats.ttest_rel(x, y)
        tcases.append({"name": name, "x": floats(x), "y": floats(y),
                       "statistic": float(r.statistic), "pvalue": float(r.pvalue)})

    # ---- Wilcoxon signed-rank (scipy defaults; method recorded as SciPy chose it)
    wcases = []

    def add(name, x, y, method="auto", expect_method=None):
        d = np.asarray(x) - np.asarray(y)
        r = stats.wilcoxon(x, y, method=method)
        used = method
        if method == "auto":
            used = "exact" if (len(d) <= 50 and not np.any(d == 0)) else "approx"
        wcases.append({"name": name, "x": floats(x), "y": floats(y),
                       "statistic": float(r.statistic), "pvalue": float(r.pvalue),
                       "scipy_method": used,
                       "expect_method": expect_method or ("exact" if used == "exact" else "normal")})

    for n in (5, 9, 12, 20, 33, 50):  # exact: continuous values, no ties, no zeros
        x = rng.normal(0.0, 1.0, n)
        y = x + rng.normal(0.2, 1.0, n)
        add(f"exact_n{n}", x, y)
    # All differences of one sign: the most extreme exact p-value, 2/2^n.
    x = np.arange(1.0, 13.0)
    add("exact_all_positive_n12", x + np.linspace(0.1, 1.2, 12), x)
    # Normal approximation: more than 50 pairs, continuous.
    for n in (51, 71, 200):
        x = rng.normal(0.0, 0.05, n)
        y = x + rng.normal(0.01, 0.05, n)
        add(f"approx_n{n}", x, y)
    # Zeros and ties (values on a grid, as accuracies are): SciPy drops zeros and corrects
    # the variance for tied ranks.
    for n in (60, 71):
        x = np.round(rng.normal(0.8, 0.05, n), 3)
        y = np.round(x + rng.choice([-0.002, -0.001, 0.0, 0.0, 0.001, 0.002, 0.003], n), 3)
        add(f"approx_zeros_ties_n{n}", x, y)
    # ≤ 50 pairs with zeros: SciPy switches to the normal approximation.
    x = np.round(rng.normal(0.8, 0.05, 30), 2)
    y = np.round(x + rng.choice([-0.01, 0.0, 0.01, 0.02], 30), 2)
    add("small_with_zeros_n30", x, y)
    # ≤ 50 pairs with ties but no zeros: flynn uses the normal approximation (SciPy 1.10
    # would truncate R+ on its exact path), so the reference is SciPy's method="approx".
    x = np.zeros(20)
    y = -np.array([1, 1, 2, 2, 2, 3, -1, 4, 4, 5, -5, 6, 7, 7, 8, -8, 9, 9, 9, 10], float)
    add("small_ties_no_zeros_n20", x, y, method="approx", expect_method="normal")

    # ---- average ranks (rankdata default) and the exact null distribution
    rcases = []
    for vals in ([3.0, 1.0, 2.0], [1.0, 1.0, 1.0], [0.5, 0.2, 0.5, 0.1, 0.2, 0.5],
                 floats(np.round(rng.normal(0, 1, 15), 1))):
        rcases.append({"values": floats(vals), "ranks": floats(stats.rankdata(vals))})
    null = {str(n): floats(_get_wilcoxon_distr(n)) for n in (1, 2, 5, 10)}

    meta = {"generator": "scripts/make_stats_fixtures.py", "scipy": scipy.__version__,
            "numpy": np.__version__, "python": sys.version.split()[0]}
    for fname, body in (("ttest.json", {"meta": meta, "cases": tcases}),
                        ("wilcoxon.json", {"meta": meta, "cases": wcases}),
                        ("rankdata.json", {"meta": meta, "cases": rcases, "null": null})):
        with open(os.path.join(OUT, fname), "w") as f:
            json.dump(body, f, indent=1)
            f.write("\n")
    print(f"wrote {len(tcases)} t-test, {len(wcases)} Wilcoxon, {len(rcases)} rank cases to {OUT}")


if __name__ == "__main__":
    main()
