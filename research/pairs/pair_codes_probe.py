#!/usr/bin/python3
"""Second-order Fly Bloom Filters (issue 20, research/defaults/history.md "Eleventh round"): do filters
that count *pairs* of FlyHash winners, per class, recover what one filter per class loses?

The tenth round measured that the hash keeps kNN's neighbourhoods (kNN on shared winners
0.857 on Fashion-MNIST) while every function of the per-class unit counts stays ≤ 0.8225.
A class filter over pairs of winners is still one pass of integer counting into one table
per class (so merging, forgetting, federation and the DP release work on it unchanged), but
it sees which winners occur *together* in a class's rows.

Pair codes of a row (data-independent, deterministic): order the row's ρ winners by a fixed
pseudo-random priority of the unit (a permutation of 0…m−1 drawn from --seed); pair each
winner with the next r in that order (cyclically), giving r·ρ pairs; each unordered pair
{u, v} is mixed to one of M cells. Designs measured, all with FilterScoring::Relative
(each class's filter divided by its mean; filter_scores.py):
  base         today's defaults (the library's own hash, m, ρ, γ);
  pN_xK        pair codes only: r = N, M = K·m, γ = 0.5;
  uN_xK_gG     the ρ unit codes and the r·ρ pair codes in one table of m + M cells, γ = G;
  sN_xK        two tables, each relative: units at the default γ plus pairs at γ = 0.5,
               each divided by its number of codes (ρ, r·ρ) and summed;
  sN_xK_wW     the same with the pairs' part weighted W (sN_xK is W = 1);
  …_gG         (p and s designs) the pairs' γ = G instead of 0.5.

Protocol: each set's rows split in --folds folds (seeded shuffle); the default model is
fitted on the other folds, and every design scores the fold's rows from the same hashes
(FlyNNClassifier.hash). Fashion-MNIST (--fashion, --fashion-hashes): training rows 0–49999
train, 50000–59999 query (the test set is not read); --fashion-test is the held-out report
of designs fixed there (all training rows, the test set scored once). Groups as research/defaults/shapes_study.py names them; choose on
selection groups, report on validation groups.

Usage: research/pairs/pair_codes_probe.py OUT.jsonl --groups openml-sel[,...] [--data-dir DIR] [--designs s4_x8,...]
       research/pairs/pair_codes_probe.py OUT.jsonl --fashion
       research/pairs/pair_codes_probe.py OUT.jsonl --imbalanced [--designs s4_x8]
       research/pairs/pair_codes_probe.py OUT.jsonl --fashion-hashes [--designs s4_x8,s4_x8_w0.5]
       research/pairs/pair_codes_probe.py OUT.jsonl --fashion-test [--designs s4_x8,s4_x8_w0.5]   (held out)
       research/pairs/pair_codes_probe.py - --set FILE.csv.gz --designs s4_x8,s4_x8_w0.5,s4_x16,s4_x32
       research/pairs/pair_codes_probe.py OUT.jsonl --summary
       research/pairs/pair_codes_probe.py OUT.jsonl --by-load s4_x8_w0.5
Needs the Python package (pip install .), numpy and pandas.
"""
import argparse
import json
import os
import statistics
import sys
import time

import numpy as np
import pandas as pd
from sklearn.metrics import accuracy_score, balanced_accuracy_score

import flynn
from fashion_data import fashion_rows
from filter_scores import class_counts, relative_table, scores

HERE = os.path.dirname(os.path.abspath(__file__))
PAIR_GAMMA = 0.5
DESIGNS = ["base", "p2_x8", "p4_x8", "p2_x16", "u4_x8_g0.5", "u4_x8_g0.65", "s2_x8", "s4_x8",
           "s4_x8_w0.25", "s4_x8_w0.5", "s4_x8_w2"]
MAX_CELLS = 1 << 21


def mix64(k):
    """A 64-bit finaliser (splitmix64's): the pair → cell mix, wrapping uint64 arithmetic."""
    k = k.astype(np.uint64)
    with np.errstate(over="ignore"):
        k = (k ^ (k >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        k = (k ^ (k >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return k ^ (k >> np.uint64(31))


def pair_codes(H, m, r, M, seed):
    """Each row's r·ρ pair cells in [0, M) (H: rows × ρ winners in [0, m))."""
    priority = np.random.default_rng(seed).permutation(m)
    A = np.take_along_axis(H, np.argsort(priority[H], axis=1), 1).astype(np.uint64)
    rho = A.shape[1]
    first = np.repeat(np.arange(rho), r)
    second = (first + np.tile(np.arange(1, r + 1), rho)) % rho
    a, b = A[:, first], A[:, second]
    lo, hi = np.minimum(a, b), np.maximum(a, b)
    return (mix64(lo * np.uint64(m) + hi) % np.uint64(M)).astype(np.int64)


def design_scores(name, TW, ty, W, L, m, gamma, seed, weights=None, memo=None):
    """n × L scores (lower = nearer) of the query hashes W under a design; `weights`: the
    class weights (ClassWeight::weights; None = all 1), applied to every table as the
    library applies them to its filter (γ^{w_l·c}). `memo` (a dict kept across the designs
    of one model) holds the unit scores and each (r, M)'s pair codes and scores, which
    several designs share."""
    memo = {} if memo is None else memo

    def once(key, compute):
        if key not in memo:
            memo[key] = compute()
        return memo[key]
    unit = once("base", lambda: scores(relative_table(class_counts(TW, ty, L, m), gamma, weights), W))
    if name == "base":
        return unit
    kind, rest = name[0], name[1:].split("_")
    r, M = int(rest[0]), min(int(rest[1][1:]) * m, MAX_CELLS)
    # Optional parts after r and M: wW (the pairs' weight, s designs), gG (the pairs' γ, p and
    # s designs; u designs take their one γ as before).
    opts = {t[0]: float(t[1:]) for t in rest[2:]}
    pair_gamma = opts.get("g", PAIR_GAMMA) if kind != "u" else PAIR_GAMMA
    TP, QP = once(("codes", r, M), lambda: (pair_codes(TW, m, r, M, seed), pair_codes(W, m, r, M, seed)))
    pair = once(("pairs", r, M, pair_gamma),
                lambda: scores(relative_table(class_counts(TP, ty, L, M), pair_gamma, weights), QP))
    if kind == "p":
        return pair
    if kind == "u":
        g = float(rest[2][1:])
        TU, QU = np.concatenate([TW, m + TP], 1), np.concatenate([W, m + QP], 1)
        return scores(relative_table(class_counts(TU, ty, L, m + M), g, weights), QU)
    return unit / W.shape[1] + opts.get("w", 1.0) * pair / QP.shape[1]


def evaluate(Xtr, ytr, Xq, yq, threads, seed, designs=DESIGNS, given=None, balanced=False):
    """Accuracy of each design on the query rows, from one model fitted with the defaults
    (or the hyper-parameters `given`), and of the library's own predict. With `balanced`:
    balanced accuracy under --class-weight balanced (weights n/(L·n_l), as the library's)."""
    clf = flynn.FlyNNClassifier(n_jobs=threads, **(given or {}),
                                **({"class_weight": "balanced"} if balanced else {})).fit(Xtr, ytr)
    L, m, gamma = len(clf.classes_), clf.config_["m"], clf.config_["gamma"]
    ty, y = np.searchsorted(clf.classes_, ytr), np.searchsorted(clf.classes_, yq)
    weights = len(ty) / (L * np.maximum(np.bincount(ty, minlength=L), 1)) if balanced else None
    metric = balanced_accuracy_score if balanced else accuracy_score
    TW, W = clf.hash(Xtr).astype(np.int64), clf.hash(Xq).astype(np.int64)
    memo = {}
    out = {d: float(metric(y, design_scores(d, TW, ty, W, L, m, gamma, seed, weights, memo).argmin(1)))
           for d in designs}
    # The numpy base must be the library's own prediction (same counts, same scoring).
    out["library"] = float(metric(y, np.searchsorted(clf.classes_, clf.predict(Xq))))
    return out, {k: clf.config_[k] for k in ("m", "s", "rho", "gamma", "variant")}


def done_sets(out):
    """Names of the sets already in the results file `out` (runs resume)."""
    if not os.path.exists(out):
        return set()
    with open(out) as f:
        return {json.loads(line)["set"] for line in f if line.strip()}


def run_imbalanced(a):
    """The imbalanced study's sets (research/imbalanced/imbalanced_study.py: tables and the validation
    half's imbalanced sets), 5 folds, balanced weights; kNN's balanced accuracy read from
    research/imbalanced/wide_units_defaults.jsonl (its own 5 folds)."""
    sys.path[:0] = [os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), d) for d in ("common", "defaults", "imbalanced", "pairs", "tuning")]  # research helpers
    import imbalanced_study as im
    knn = {}
    with open(os.path.join(HERE, "..", "imbalanced", "wide_units_defaults.jsonl")) as f:
        for line in f:
            r = json.loads(line)
            knn[r["set"]] = r["knn_balanced_accuracy"]
    done = done_sets(a.out)
    for group, sets in (("tables", im.tables()), ("validation", im.validation())):
        for name, path, label in sets:
            if name not in knn or name in done:
                continue
            t0 = time.time()
            X, y = load(path, ["--label-col", label] if label else [])
            balanced, _ = folds_mean(X, y, 5, lambda Xt, yt, Xq, yq: evaluate(
                Xt, yt, Xq, yq, a.threads, a.seed, a.designs, balanced=True))
            rec = {"set": name, "group": "imbalanced-" + group, "rows": len(y),
                   "balanced_accuracy": balanced,
                   "knn_balanced_accuracy": knn[name], "seconds": round(time.time() - t0, 1)}
            with open(a.out, "a") as f:
                f.write(json.dumps(rec) + "\n")
            print(name, {d: round(v, 4) for d, v in rec["balanced_accuracy"].items()}, "kNN", round(knn[name], 4),
                  flush=True)


def folds_mean(X, y, folds, score):
    """Mean over `folds` seeded folds of score(X_train, y_train, X_query, y_query) -> (a dict
    of figures, config); X a float array or (with text columns) a DataFrame."""
    numeric = X.select_dtypes(include=[np.number]).shape[1] == X.shape[1]
    Xa = X.to_numpy(np.float32) if numeric else X
    pick = (lambda idx: Xa[idx]) if numeric else (lambda idx: Xa.iloc[idx])
    perm = np.random.default_rng(0).permutation(len(y))
    per, config = {}, None
    for k in range(folds):
        q = np.sort(perm[k::folds])
        tr = np.setdiff1d(np.arange(len(y)), q)
        figures, config = score(pick(tr), y[tr], pick(q), y[q])
        for d, v in figures.items():
            per.setdefault(d, []).append(v)
    return {d: float(np.mean(v)) for d, v in per.items()}, config


def load(path, flags):
    df = pd.read_csv(path, na_values=["?", "NA"], low_memory=False)
    label = flags[flags.index("--label-col") + 1] if "--label-col" in flags else df.columns[-1]
    y = df[label].astype(str).to_numpy()
    X = df.drop(columns=[label] + ([flags[flags.index("--ignore-cols") + 1]] if "--ignore-cols" in flags else []))
    return X, y


def run_sets(a):
    sys.path[:0] = [os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), d) for d in ("common", "defaults", "imbalanced", "pairs", "tuning")]  # research helpers
    from shapes_study import group_sets
    done = done_sets(a.out)
    for group in a.groups.split(","):
        for name, path, flags in group_sets(group, a.data_dir):
            if name in done:
                continue
            t0 = time.time()
            X, y = load(path, flags)
            accuracy, config = folds_mean(X, y, a.folds, lambda Xt, yt, Xq, yq: evaluate(
                Xt, yt, Xq, yq, a.threads, a.seed, a.designs))
            rec = {"set": name, "group": group, "rows": len(y), "d": X.shape[1], "config": config,
                   "accuracy": accuracy,
                   "seconds": round(time.time() - t0, 1)}
            with open(a.out, "a") as f:
                f.write(json.dumps(rec) + "\n")
            print(name, {d: round(v, 4) for d, v in rec["accuracy"].items()}, flush=True)


def run_one_set(a):
    """One data file (label last), --folds folds, the designs given (any r, K, W)."""
    X, y = load(a.set, [])
    accuracy, config = folds_mean(X, y, a.folds, lambda Xt, yt, Xq, yq: evaluate(
        Xt, yt, Xq, yq, a.threads, a.seed, a.designs))
    print(os.path.basename(a.set), config, {d: round(v, 4) for d, v in accuracy.items()})


def run_fashion(a):
    X, y = fashion_rows("train")
    t0 = time.time()
    accs, config = evaluate(X[:50000], y[:50000], X[50000:], y[50000:], a.threads, a.seed, a.designs)
    rec = {"set": "fashion-mnist (train 0-49999 / 50000-59999)", "group": "fashion", "rows": 60000, "d": 784,
           "config": config, "accuracy": accs, "seconds": round(time.time() - t0, 1)}
    with open(a.out, "a") as f:
        f.write(json.dumps(rec) + "\n")
    print(json.dumps(rec, indent=1))


def run_fashion_test(a):
    """The held-out report of designs fixed on the split: trained on all 60000 training rows,
    the Fashion-MNIST test set scored once, under the default hash and s = 32."""
    X, y = fashion_rows("train")
    Xt, yt = fashion_rows("t10k")
    for given in ({}, {"s": 32}):
        accs, config = evaluate(X, y, Xt, yt, a.threads, a.seed, a.designs, given)
        rec = {"set": "fashion-mnist test set, hash " + (json.dumps(given) if given else "default"),
               "group": "fashion-test", "rows": 70000, "d": 784, "config": config, "accuracy": accs}
        with open(a.out, "a") as f:
            f.write(json.dumps(rec) + "\n")
        print(rec["set"], {d: round(v, 4) for d, v in accs.items()}, flush=True)


FASHION_HASHES = [{}, {"s": 32}, {"s": 16}, {"m": 65536}, {"m": 65536, "s": 32}]


def run_fashion_hashes(a):
    """Cheaper hashes to pay for the pair reads: Fashion-MNIST's split under the default
    hash and four cheaper ones, each with its default `predict` time (one thread, the best
    of 3 over the 10000 query rows, a model of 2000 rows: the hash dominates) beside the
    accuracy of base and the pair designs."""
    X, y = fashion_rows("train")
    Xtr, ytr, Xq, yq = X[:50000], y[:50000], X[50000:], y[50000:]
    for given in FASHION_HASHES:
        accs, config = evaluate(Xtr, ytr, Xq, yq, a.threads, a.seed, a.designs, given)
        small = flynn.FlyNNClassifier(n_jobs=1, **given).fit(Xtr[:2000], ytr[:2000])
        times = []
        for _ in range(3):
            t0 = time.perf_counter()
            small.predict(Xq)
            times.append(time.perf_counter() - t0)
        rec = {"set": "fashion-mnist split, hash " + (json.dumps(given) if given else "default"),
               "group": "fashion-hashes", "rows": 60000, "d": 784, "config": config,
               "predict_us_per_row_1_thread": round(1e6 * min(times) / len(Xq), 1), "accuracy": accs}
        with open(a.out, "a") as f:
            f.write(json.dumps(rec) + "\n")
        print(rec["set"], rec["predict_us_per_row_1_thread"], {d: round(v, 4) for d, v in accs.items()},
              flush=True)


def summary(a):
    with open(a.out) as f:
        recs = [json.loads(l) for l in f if l.strip()]
    if recs and "balanced_accuracy" in recs[0]:
        return summary_balanced(recs)
    if recs and "predict_us_per_row_1_thread" in recs[0]:
        for r in recs:
            print(f"{r['set']:60s} m={r['config']['m']:6d} s={r['config']['s']:2d} predict "
                  f"{r['predict_us_per_row_1_thread']:6.1f} µs/row  " +
                  "  ".join(f"{d} {v:.4f}" for d, v in r["accuracy"].items() if d != "library"))
        return None
    groups = sorted({r["group"] for r in recs}, key=lambda g: [x["group"] for x in recs].index(g))
    for g in groups:
        rs = [r for r in recs if r["group"] == g]
        print(f"\n{g} ({len(rs)} sets): accuracy change against base, points")
        print(f"{'design':14s} {'median':>7s} {'mean':>7s} {'worst':>7s} {'best':>7s} {'better':>7s} {'worse':>6s}")
        for d in [d for d in DESIGNS[1:] if all(d in r["accuracy"] for r in rs)]:
            delta = [100 * (r["accuracy"][d] - r["accuracy"]["base"]) for r in rs]
            print(f"{d:14s} {statistics.median(delta):+7.2f} {statistics.mean(delta):+7.2f} {min(delta):+7.2f} "
                  f"{max(delta):+7.2f} {sum(x > 0.05 for x in delta):7d} {sum(x < -0.05 for x in delta):6d}")
        off = max(abs(r["accuracy"]["base"] - r["accuracy"]["library"]) for r in rs)
        print(f"(numpy base vs library predict: largest difference {100 * off:.3f} points)")


def summary_by_load(a):
    """Does the pair block's load predict where a design loses? Per set (selection and
    validation groups alike: nothing is chosen here), the codes per pair cell over all
    classes — training rows × r·ρ / M, the training rows being (folds − 1)/folds of the set —
    beside the design's change against base, sorted by load, and Spearman's ρ over the sets."""
    from scipy.stats import spearmanr
    with open(a.out) as f:
        recs = [json.loads(l) for l in f if l.strip()]
    d = a.by_load
    kind, rest = d[0], d[1:].split("_")
    r, k = int(rest[0]), int(rest[1][1:])
    rows = []
    for rec in recs:
        if d not in rec.get("accuracy", {}) or rec["group"] == "fashion":
            continue
        c = rec["config"]
        load = rec["rows"] * (a.folds - 1) / a.folds * r * c["rho"] / min(k * c["m"], MAX_CELLS)
        rows.append((load, 100 * (rec["accuracy"][d] - rec["accuracy"]["base"]), rec["set"], rec["group"]))
    rows.sort()
    for load, delta, name, group in rows:
        print(f"{load:8.2f} {delta:+6.2f}  {name} ({group})")
    rho, p = spearmanr([x[0] for x in rows], [x[1] for x in rows])
    print(f"{len(rows)} sets; Spearman's rho of load and change {rho:+.3f} (p = {p:.2f}); "
          f"change where load > 20: " + ", ".join(f"{x[2]} {x[1]:+.2f}" for x in rows if x[0] > 20))


def summary_balanced(recs):
    designs = [d for d in DESIGNS if all(d in r["balanced_accuracy"] for r in recs)]
    for g in sorted({r["group"] for r in recs}):
        rs = [r for r in recs if r["group"] == g]
        print(f"\n{g} ({len(rs)} sets): balanced accuracy − kNN's, points (balanced class weights)")
        print(f"{'design':14s} {'median':>7s} {'mean':>7s} {'worst':>7s} {'>= kNN':>7s}")
        for d in designs:
            gap = [100 * (r["balanced_accuracy"][d] - r["knn_balanced_accuracy"]) for r in rs]
            print(f"{d:14s} {statistics.median(gap):+7.2f} {statistics.mean(gap):+7.2f} {min(gap):+7.2f} "
                  f"{sum(x >= 0 for x in gap):4d}/{len(gap)}")
        print("below kNN with " + designs[-1] + ": " + ", ".join(
            f"{r['set']} {100 * (r['balanced_accuracy'][designs[-1]] - r['knn_balanced_accuracy']):+.1f}"
            for r in rs if r["balanced_accuracy"][designs[-1]] < r["knn_balanced_accuracy"]))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out")
    ap.add_argument("--groups")
    ap.add_argument("--fashion", action="store_true")
    ap.add_argument("--set", help="one data file (label last), scored with --designs (e.g. puma32H)")
    ap.add_argument("--fashion-test", action="store_true",
                    help="the held-out report: all training rows, the test set scored once")
    ap.add_argument("--fashion-hashes", action="store_true",
                    help="Fashion-MNIST's split under cheaper hashes, with predict times")
    ap.add_argument("--imbalanced", action="store_true",
                    help="balanced accuracy with balanced class weights on the imbalanced study's sets")
    ap.add_argument("--summary", action="store_true")
    ap.add_argument("--by-load", metavar="DESIGN",
                    help="with OUT a finished run: the design's change per set against its pair block's load")
    ap.add_argument("--data-dir", help="where the groups' data cache (DIR/data, as for "
                    "shapes_study.py) lives; default: OUT's folder")
    ap.add_argument("--folds", type=int, default=3)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--designs", default=",".join(DESIGNS),
                    help="comma-separated designs to score (base is always included)")
    a = ap.parse_args()
    a.designs = ["base"] + [d for d in a.designs.split(",") if d != "base"]
    a.data_dir = a.data_dir or os.path.dirname(os.path.abspath(a.out))
    modes = [(a.by_load, summary_by_load), (a.summary, summary), (a.fashion, run_fashion), (a.imbalanced, run_imbalanced),
             (a.fashion_hashes, run_fashion_hashes), (a.fashion_test, run_fashion_test),
             (a.set, run_one_set), (True, run_sets)]
    next(run for chosen, run in modes if chosen)(a)

if __name__ == "__main__":
    sys.exit(main())
