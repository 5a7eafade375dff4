#!/usr/bin/env python3
"""The study behind `flynn train --auto` (issue 20; research/defaults/history.md, "Seventh round: an automatic choice").

run: for every set of the groups (research/defaults/shapes_study.py's groups and data), one nested
     cross-validation `flynn eval --folds 5 --auto --auto-study --json`: in each outer fold,
     every candidate is cross-validated (3 folds) on that fold's training rows, and
     (--auto-study) every candidate is also scored on the outer folds. One JSON line per
     set goes to OUT_DIR/auto.jsonl (resumable).
rules: replays decision rules on those runs without running anything again. A rule is a
     candidate subset, a γ grid and a margin: in outer fold f it takes the best (candidate, γ)
     of the inner CV means when that beats the default (candidate 0, γ = 0.8) by more than the
     margin, else the default, and scores what it took on fold f. Gaps are to tuned kNN of
     shapes_study.py (its results.jsonl in KNN_DIR: the best of 14 exact-kNN settings on the
     same outer folds, an optimistic reference).

Choose a rule on the selection groups; report it on the validation groups only.

usage: auto_study.py run FLYNN DATA_DIR OUT_DIR --groups a,b
       auto_study.py rules OUT_DIR KNN_DIR --groups a,b [--rule NAME]...
DATA_DIR holds shapes_study.py's data cache (DATA_DIR/data/...).
"""
import argparse
import json
import os
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), d) for d in ("common", "defaults", "imbalanced", "pairs", "tuning")]  # research helpers
from shapes_study import group_sets  # noqa: E402

DEFAULT_GAMMA = 0.8

# Rules replayed by `rules`: name -> (candidate names or None for all, γ grid or None for
# all, margin). "default" is the rule's configuration alone. Adopted (2026-12-03, on the
# selection groups): all_se0.5, every candidate and γ with a margin of half a standard error
# (AutoOptions in include/flynn/eval/auto_config.hpp). SMALL_SET is the candidate list
# without the other variants' m×4.
SMALL_SET = ["default", "default m×4", "zsign-q+paper", "zsign-q", "z", "paper", "thermo-sign", "anchor",
                    "anchor+paper"]
RULES = {
    "default": (["default"], [DEFAULT_GAMMA], 0.0),
    "all_m0": (None, None, 0.0),
    "all_m0.005": (None, None, 0.005),
    "all_m0.01": (None, None, 0.01),
    "all_m0.02": (None, None, 0.02),
    "all_m0.03": (None, None, 0.03),
    "small_m0": (SMALL_SET, None, 0.0),
    "small_m0.005": (SMALL_SET, None, 0.005),
    "small_m0.01": (SMALL_SET, None, 0.01),
    "small_m0.02": (SMALL_SET, None, 0.02),
    # A margin that shrinks with the rows the choice reads (n = 4/5 of the set's): k·√(0.25/n),
    # k binomial standard errors of an accuracy near 0.5, at least `floor`.
    "all_se1": (None, None, ("se", 1.0, 0.005)),
    "all_se0.5": (None, None, ("se", 0.5, 0.005)),
    "small_se1": (SMALL_SET, None, ("se", 1.0, 0.005)),
    "small_se0.5": (SMALL_SET, None, ("se", 0.5, 0.005)),
    "gamma_only_m0.01": (["default"], None, 0.01),
    "variants_g.8_m0.01": (["default", "zsign-q+paper", "zsign-q", "z", "paper", "thermo-sign", "anchor",
                            "anchor+paper"], [DEFAULT_GAMMA], 0.01),
    "small_g08_m0.01": (SMALL_SET, [0.0, 0.8], 0.01),
    "small_g089_m0.01": (SMALL_SET, [0.0, 0.8, 0.9], 0.01),
}


def run(a):
    out = os.path.join(a.out_dir, "auto.jsonl")
    os.makedirs(a.out_dir, exist_ok=True)
    done = set()
    if os.path.exists(out):
        done = {json.loads(line)["dataset"] for line in open(out)}
    for group in a.groups.split(","):
        for name, path, flags in group_sets(group, a.data_dir):
            if name in done:
                continue
            cmd = [a.flynn, "eval", "--data", path, "--folds", "5", "--auto", "--auto-study", "--json", "--quiet",
                   "--threads", a.threads] + flags
            p = subprocess.run(cmd, capture_output=True, text=True)
            if p.returncode != 0:
                rec = {"dataset": name, "group": group, "error": p.stderr.strip()[-300:]}
            else:
                j = json.loads(p.stdout)
                rec = {"dataset": name, "group": group, "rows": j["rows"], "d": j["features"], "L": j["classes"],
                       "nested": j["accuracy_mean"], "seconds": j["seconds"],
                       "candidates": [c["name"] for c in j["auto"]["candidates"]], "gammas": j["auto"]["gammas"],
                       "folds": [{"inner": f["inner"], "chosen": f["chosen"]} for f in j["auto"]["folds"]],
                       "outer": j["auto"]["outer"]}
            with open(out, "a") as f:
                f.write(json.dumps(rec) + "\n")
            print(name, rec.get("nested", rec.get("error")), flush=True)


def replay(rec, rule):
    """Nested accuracy of `rule` on one set's runs."""
    names, gammas, margin = rule
    if isinstance(margin, tuple):
        _, k, floor = margin
        margin = max(floor, k * (0.25 / (0.8 * rec["rows"])) ** 0.5)
    cand = [i for i, n in enumerate(rec["candidates"]) if names is None or n in names]
    gam = [i for i, g in enumerate(rec["gammas"]) if gammas is None or g in gammas]
    g0 = rec["gammas"].index(DEFAULT_GAMMA)
    accs = []
    for f, fold in enumerate(rec["folds"]):
        inner = fold["inner"]
        best, best_v = (0, g0), inner[0][g0]
        for c in cand:
            for g in gam:
                if inner[c][g] > best_v:
                    best, best_v = (c, g), inner[c][g]
        if not best_v - inner[0][g0] > margin:
            best = (0, g0)
        accs.append(rec["outer"][best[0]][best[1]][f])
    return sum(accs) / len(accs)


def rules(a):
    recs = {}
    for line in open(os.path.join(a.out_dir, "auto.jsonl")):
        j = json.loads(line)
        if "error" not in j:
            recs[j["dataset"]] = j
    knn = {}
    for line in open(os.path.join(a.knn_dir, "results.jsonl")):
        j = json.loads(line)
        if j.get("setting") == "knn" and "accuracy" in j:
            knn[j["dataset"]] = j["accuracy"]
    names = a.rule or list(RULES)
    for group in a.groups.split(","):
        sets = [n for n, _, _ in group_sets(group, a.data_dir) if n in recs and n in knn]
        if not sets:
            continue
        print(f"\n== {group} ({len(sets)} sets)")
        print(f"{'rule':22s} {'median gap':>10s} {'norm. med':>9s} {'worst':>7s} {'>8 behind':>9s} "
              f"{'vs default: better/worse':>25s}")
        base = {n: replay(recs[n], RULES["default"]) for n in sets}
        for rule in names:
            acc = {n: replay(recs[n], RULES[rule]) for n in sets}
            gaps = [100 * (knn[n] - acc[n]) for n in sets]
            norm = [1 - acc[n] / knn[n] for n in sets]
            better = sum(acc[n] > base[n] + 1e-12 for n in sets)
            worse = sum(acc[n] < base[n] - 1e-12 for n in sets)
            print(f"{rule:22s} {statistics.median(gaps):10.2f} {statistics.median(norm):9.4f} {max(gaps):7.1f} "
                  f"{sum(g > 8 for g in gaps):9d} {better:12d}/{worse:<3d}")
        if a.per_set:
            for n in sets:
                print(f"  {n:40s} kNN {knn[n]:.3f} default {base[n]:.3f} {a.per_set} {replay(recs[n], RULES[a.per_set]):.3f}")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run")
    r.add_argument("flynn")
    r.add_argument("data_dir")
    r.add_argument("out_dir")
    r.add_argument("--groups", required=True)
    r.add_argument("--threads", default="1")
    s = sub.add_parser("rules")
    s.add_argument("out_dir")
    s.add_argument("knn_dir")
    s.add_argument("--data-dir", required=True)
    s.add_argument("--groups", required=True)
    s.add_argument("--rule", action="append")
    s.add_argument("--per-set", default="")
    a = ap.parse_args()
    run(a) if a.cmd == "run" else rules(a)


if __name__ == "__main__":
    main()
