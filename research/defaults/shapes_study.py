#!/usr/bin/env python3
"""The data-shape study of issue 20 (research/defaults/history.md, "Fifth round: the shape of the data").

Groups (fixed before any result was looked at):
  selection   rules are chosen on these only
    openml-sel   the OpenML selection half (research/common/heldout_split.py)
    sel-binarized  each selection-half set with every column cut at its median (1 above,
                 0 otherwise), rows subsampled to at most 3000: real binary data
    sel-subsets  k in {4, 8, 12, 16} random columns of each selection-half set (seeded by
                 the set and k), rows subsampled to at most 3000: real low-dimensional data
    tables       ../shared/data/tables (real tables with text columns and NA cells)
    lowd, binary, onehot   research/common/shape_generators.py, seeds 0-11
  validation  reported only, never used for a choice
    openml-val   the OpenML validation half
    sklearn      iris, wine, breast-cancer, digits
    mlbench      the classification sets of Debian's r-cran-mlbench (exported with
                 python3-rdata by export_mlbench below): public tables nobody here tuned on
    lowd-val, binary-val, onehot-val   the generators with seeds 1000-1011, drawn afresh
    lowd-fresh, binary-fresh, onehot-fresh   seeds 2000-2011: drawn for the --auto mode, whose
                 design read the -val seeds (research/defaults/history.md, "Seventh round")

Measurement: FlyNN by `flynn eval --folds 5 --json` (stratified, fold seed 0); tuned kNN by
`flynn eval --knn` on the same folds (exact kNN on L2-normalised rows and on standardised
features, k in {1,...,64}, the best of the 14 on those folds). gap = kNN - FlyNN in points,
normalised gap = 1 - FlyNN/kNN.

usage: shapes_study.py FLYNN OUT_DIR --groups a,b --settings default,x [--summary]
       SETTING is a name of SETTINGS below.
Results: OUT_DIR/results.jsonl, one line per (dataset, setting); resumable.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), d) for d in ("common", "defaults", "imbalanced", "pairs", "tuning")]  # research helpers
from heldout_split import split  # noqa: E402

SHARED = os.path.normpath(os.path.join(HERE, "..", "..", "..", "shared", "data"))
MLBENCH_DIR = "/usr/lib/R/site-library/mlbench/data"

# The m rule of the variants without anchor units before the tenth round (256·d; since then
# it holds for d ≤ 16 and absolute scoring), as an expression of d, which settings scale.
DEFAULT_M = "max(4096, min(131072, 256 * d))"
# The tenth round's m for d > 16 (512·d, the same cap).
WIDE_M = "min(131072, 512 * d)"

# name -> extra `flynn eval` flags ("default" = this build's defaults).
SETTINGS = {
    "default": [],
    "auto": ["--auto"],  # nested: train --auto's choice made on each fold's training rows
    # The defaults of the eighth round (research/defaults/history.md): anchor only for d <= 10, at the
    # rules of m, ρ and γ of the other variants.
    "eighth": ["--variant", "{'anchor' if d <= 10 else 'zsign-q+paper'}", "--m", f"{{{DEFAULT_M}}}",
               "--rho", f"{{max(128, {DEFAULT_M} // (4 * d))}}", "--gamma", "0.8"],
    # The defaults before the eighth round (research/defaults/history.md): absolute scoring, ρ floor 64.
    "absolute": ["--filter-scoring", "absolute"],
    "paper": ["--variant", "paper"],
    "g0": ["--gamma", "0"],
    "g0.5": ["--gamma", "0.5"],
    "g0.9": ["--gamma", "0.9"],
    "g0.95": ["--gamma", "0.95"],
    "zsign-q": ["--variant", "zsign-q"],
    "zsign-q_g0": ["--variant", "zsign-q", "--gamma", "0"],
    "thermo-sign": ["--variant", "thermo-sign"],
    "thermo-sign_g0": ["--variant", "thermo-sign", "--gamma", "0"],
    "anchor": ["--variant", "anchor"],
    "anchor+paper": ["--variant", "anchor+paper"],
    "anchor_s4": ["--variant", "anchor", "--s", "{min(4, 8 * d)}"],
    "anchor_s8": ["--variant", "anchor", "--s", "{min(8, 8 * d)}"],
    "anchor_shalf": ["--variant", "anchor", "--s", "{max(2, d // 2)}"],
    "anchor_sd": ["--variant", "anchor", "--s", "{d}"],
    "anchor_s8_g0.5": ["--variant", "anchor", "--s", "{min(8, 8 * d)}", "--gamma", "0.5"],
    "anchor_s8_r64": ["--variant", "anchor", "--s", "{min(8, 8 * d)}", "--rho", "64"],
    "anchor+paper_s8": ["--variant", "anchor+paper", "--s", "{min(8, d)}"],
    "r256": ["--rho", "256"],
    "r16": ["--rho", "16"],
    "r128": ["--rho", "128"],
    "scap32": ["--s", "{min(32, max(2, int(0.3 * d + 1e-9)))}"],
    "scap16": ["--s", "{min(16, max(2, int(0.3 * d + 1e-9)))}"],
    "s0.1": ["--connection-sparsity", "0.1"],
    "paper_r256": ["--variant", "paper", "--rho", "256"],
    "paper_s0.1": ["--variant", "paper", "--connection-sparsity", "0.1"],
    "sign": ["--variant", "sign"],
    "zsign-q": ["--variant", "zsign-q"],
    "zsign-q_r256": ["--variant", "zsign-q", "--rho", "256"],
    "balanced": ["--class-weight", "balanced"],
    "zsign-q_balanced": ["--variant", "zsign-q", "--class-weight", "balanced"],
    # d > 16: m = 512·d within the same cap (twice the hashing below d = 256) and ρ = 256
    "m2x_capped_r256_gt16": ["--m", f"{{{WIDE_M} if d > 16 else None}}", "--rho", "{256 if d > 16 else None}"],
    # the tenth round's rule: m = 512·d capped, ρ = max(128, m/(2d)) for d > 16 (the default since)
    "tenth": ["--m", f"{{{WIDE_M} if d > 16 else None}}",
              "--rho", f"{{max(128, {WIDE_M} // (2 * d)) if d > 16 else None}}"],
    # the default for d ≤ 16 (anchors), zsign-q with ρ = 256 above (tenth round)
    "zsign-q_r256_gt16": ["--variant", "{'zsign-q' if d > 16 else None}", "--rho", "{256 if d > 16 else None}"],
    "zsign-q_s0.1": ["--variant", "zsign-q", "--connection-sparsity", "0.1"],
    "anchor_s12": ["--variant", "anchor", "--s", "{min(12, 8 * d)}"],
    "anchor_s16": ["--variant", "anchor", "--s", "{min(16, 8 * d)}"],
    "anchor_s8_g0": ["--variant", "anchor", "--s", "{min(8, 8 * d)}", "--gamma", "0"],
    "anchor_s8_g0.9": ["--variant", "anchor", "--s", "{min(8, 8 * d)}", "--gamma", "0.9"],
    "anchor_s8_r2x": ["--variant", "anchor", "--s", "{min(8, 8 * d)}", "--rho", "{max(128, 4096 // (2 * d))}"],
    "anchor_s8_m2x": ["--variant", "anchor", "--s", "{min(8, 8 * d)}", "--m", "8192", "--rho", "{max(64, 8192 // (4 * d))}"],
    "r32": ["--rho", "32"],
    "r64": ["--rho", "64"],
    "g0.7": ["--gamma", "0.7"],
    "m2x": ["--m", f"{{2 * {DEFAULT_M}}}"],
    "m4x": ["--m", f"{{4 * {DEFAULT_M}}}"],
    "m4x_r128": ["--m", f"{{4 * {DEFAULT_M}}}", "--rho", "128"],
    "m4x_r256": ["--m", f"{{4 * {DEFAULT_M}}}", "--rho", "256"],
    "m4x_r512": ["--m", f"{{4 * {DEFAULT_M}}}", "--rho", "512"],
    "m2x_r128": ["--m", f"{{2 * {DEFAULT_M}}}", "--rho", "128"],
    "m4x_g0.5": ["--m", f"{{4 * {DEFAULT_M}}}", "--gamma", "0.5"],
    "anchor_sd_r128": ["--variant", "anchor", "--s", "{d}", "--rho", "128"],
    # second-order filters (twelfth round): the option at the value tune tries
    "pairs4": ["--pairs", "4"],
    # fourteenth round: the anchor units' fan-in under the ninth round's m, ρ, γ (the default
    # elsewhere); s stays at most half the 8d anchor units
    "anchor_s16_le16": ["--s", "{min(4 * d, max(16, d)) if d <= 16 else None}"],
    "anchor_s2d_le16": ["--s", "{min(4 * d, max(8, 2 * d)) if d <= 16 else None}"],
    "anchor_s24_le16": ["--s", "{min(4 * d, max(24, d)) if d <= 16 else None}"],
    "anchor_s3d_le16": ["--s", "{min(4 * d, max(8, 3 * d)) if d <= 16 else None}"],
    "anchor_s4d_le16": ["--s", "{4 * d if d <= 16 else None}"],
    # … and the ninth round's γ and ρ for anchor units again, at s = max(8, 2d)
    "anchor_g0.3_le16": ["--gamma", "{0.3 if d <= 16 else None}"],
    "anchor_g0.7_le16": ["--gamma", "{0.7 if d <= 16 else None}"],
    "anchor_r64_le16": ["--rho", "{64 if d <= 16 else None}"],
    "anchor_r256_le16": ["--rho", "{256 if d <= 16 else None}"],
    # … and the bound of the anchor variant again at s = 2d (its m, ρ and γ rules follow it)
    "anchor_s2d_le24": ["--variant", "{'anchor' if d <= 24 else None}", "--s", "{max(8, 2 * d) if d <= 24 else None}"],
    "anchor_s2d_le32": ["--variant", "{'anchor' if d <= 32 else None}", "--s", "{max(8, 2 * d) if d <= 32 else None}"],
    # fifteenth round: the library's value transforms as a default rule would apply them (every
    # set; the standardised encoding reads the transformed values, a paper half the raw row)
    "vt_sqrt": ["--value-transform", "sqrt"],
    "vt_log1p": ["--value-transform", "log1p"],
}


def expand(flags, d):
    """Flags with {expressions} of d (the number of features) evaluated; an expression that
    gives None drops itself and the flag before it (a setting that applies below some d)."""
    out = []
    for f in flags:
        v = eval(f[1:-1], {"d": d, "min": min, "max": max}) if f.startswith("{") else f
        if v is None:
            out.pop()
        else:
            out.append(str(v))
    return out


def anchor_rule(max_d, m_times=1, rho=None, gamma=None):
    """The default, but with anchor units (s = max(8, d)) for d <= max_d, there at m_times
    the default m and, when given, that ρ and γ (the ninth round's candidates)."""
    below = f"d <= {max_d}"
    flags = ["--variant", f"{{'anchor' if {below} else None}}", "--s", f"{{max(8, d) if {below} else None}}"]
    if m_times != 1:
        # DEFAULT_M (its cap at 131072 never binds for d <= 64, where these rules apply)
        flags += ["--m", f"{{{m_times} * {DEFAULT_M} if {below} else None}}"]
    if rho is not None:
        flags += ["--rho", f"{{{rho} if {below} else None}}"]
    if gamma is not None:
        flags += ["--gamma", f"{{{gamma} if {below} else None}}"]
    return flags

SETTINGS.update({
    f"anchor_le{t}{tag}": anchor_rule(t, **kw)
    for t in (10, 16, 24, 32, 40, 64)
    for tag, kw in [("", {}), ("_m4x_r128", {"m_times": 4, "rho": 128}), ("_m4x_r256", {"m_times": 4, "rho": 256}),
                    ("_m4x_r128_g0.5", {"m_times": 4, "rho": 128, "gamma": 0.5}),
                    ("_m2x_r128", {"m_times": 2, "rho": 128})]
})

GROUPS_SELECTION = ["openml-sel", "sel-subsets", "sel-binarized", "tables", "lowd", "binary", "onehot"]
GROUPS_VALIDATION = ["openml-val", "sklearn", "mlbench", "lowd-val", "binary-val", "onehot-val", "lowd-fresh",
                     "binary-fresh", "onehot-fresh"]


def openml_sets(half):
    data_dir = os.path.join(SHARED, "openml")
    out = []
    for did, name, h in sorted(split(os.path.join(data_dir, "MANIFEST.tsv")), key=lambda r: int(r[0])):
        if h == half:
            out.append((f"{did}_{name}", os.path.join(data_dir, f"{did}_{name}.csv.gz"), []))
    return out


def table_sets():
    data_dir = os.path.join(SHARED, "tables")
    out = []
    with open(os.path.join(data_dir, "MANIFEST.tsv")) as f:
        next(f)
        for line in f:
            file, label = line.split("\t")[:2]
            flags = ["--label-col", label]
            if file.startswith("cells"):
                flags += ["--ignore-cols", "case"]
            out.append((file.split(".")[0], os.path.join(data_dir, file), flags))
    return out


def sklearn_sets(cache):
    from sklearn import datasets
    os.makedirs(cache, exist_ok=True)
    out = []
    for name, loader in [("iris", datasets.load_iris), ("wine", datasets.load_wine),
                         ("breast-cancer", datasets.load_breast_cancer), ("digits", datasets.load_digits)]:
        path = os.path.join(cache, f"{name}.csv")
        if not os.path.exists(path):
            b = loader()
            with open(path, "w") as f:
                f.write(",".join(f"f{j}" for j in range(b.data.shape[1])) + ",label\n")
                for x, y in zip(b.data, b.target):
                    f.write(",".join(repr(float(v)) for v in x) + f",c{y}\n")
        out.append((name, path, []))
    return out


# mlbench's classification sets: (object name, class column, columns to drop).
MLBENCH = [("BreastCancer", "Class", ["Id"]), ("DNA", "Class", []), ("Glass", "Type", []),
           ("HouseVotes84", "Class", []), ("Ionosphere", "Class", []),
           ("LetterRecognition", "lettr", []), ("PimaIndiansDiabetes", "diabetes", []),
           ("Satellite", "classes", []), ("Sonar", "Class", []), ("Soybean", "Class", []),
           ("Vehicle", "Class", []), ("Vowel", "Class", []), ("Zoo", "type", [])]


def export_mlbench(cache):
    """Label-last CSV files of the mlbench sets (factors of numbers as numbers, other
    factors as text, NA kept). Needs python3-rdata and r-cran-mlbench."""
    import warnings
    import pandas as pd
    import rdata
    warnings.filterwarnings("ignore")
    os.makedirs(cache, exist_ok=True)
    out = []
    for name, label, drop in MLBENCH:
        path = os.path.join(cache, f"{name}.csv")
        if not os.path.exists(path):
            df = rdata.conversion.convert(rdata.parser.parse_file(os.path.join(MLBENCH_DIR, name + ".rda")))[name]
            df = df.drop(columns=drop)
            cols = [c for c in df.columns if c != label] + [label]
            df = df[cols].copy()
            for c in cols[:-1]:
                if isinstance(df[c].dtype, pd.CategoricalDtype) or df[c].dtype == object:
                    try:
                        df[c] = pd.to_numeric(df[c].astype(object))
                    except (ValueError, TypeError):
                        df[c] = df[c].astype(object)
                elif df[c].dtype == bool:
                    df[c] = df[c].astype(int)
            df[label] = df[label].astype(str)
            df.to_csv(path, index=False, na_rep="NA")
        out.append((name, path, []))
    return out


def subset_sets(cache):
    """k random columns of each selection-half set, at most 3000 rows (issue 9's low-d
    group, extended to k = 12, 16)."""
    import numpy as np
    os.makedirs(cache, exist_ok=True)
    out = []
    for k in (4, 8, 12, 16):
        for name, path, _ in openml_sets("selection"):
            did = int(name.split("_")[0])
            target = os.path.join(cache, f"{name}_k{k}.csv")
            if not os.path.exists(target):
                import pandas as pd
                df = pd.read_csv(path)
                X, y = df.iloc[:, :-1], df.iloc[:, -1]
                if X.shape[1] <= k:
                    continue
                rng = np.random.default_rng(did * 10 + k)
                cols = sorted(rng.choice(X.shape[1], k, replace=False))
                rows = np.arange(len(y)) if len(y) <= 3000 else np.sort(rng.choice(len(y), 3000, replace=False))
                part = pd.concat([X.iloc[rows, cols], y.iloc[rows]], axis=1)
                if part.iloc[:, -1].value_counts().min() < 5:
                    continue
                part.to_csv(target, index=False)
            out.append((f"{name}_k{k}", target, []))
    return out


def binarized_sets(cache):
    """Each selection-half set with every column cut at its median, at most 3000 rows."""
    import numpy as np
    import pandas as pd
    os.makedirs(cache, exist_ok=True)
    out = []
    for name, path, _ in openml_sets("selection"):
        target = os.path.join(cache, f"{name}_bin.csv")
        if not os.path.exists(target):
            df = pd.read_csv(path, na_values=["?"])
            X, y = df.iloc[:, :-1], df.iloc[:, -1]
            rng = np.random.default_rng(int(name.split("_")[0]))
            rows = np.arange(len(y)) if len(y) <= 3000 else np.sort(rng.choice(len(y), 3000, replace=False))
            B = (X.iloc[rows] > X.median()).astype(int)
            B = B.loc[:, B.nunique() > 1]
            part = pd.concat([B, y.iloc[rows]], axis=1)
            if part.iloc[:, -1].value_counts().min() < 5:
                continue
            part.to_csv(target, index=False)
        out.append((f"{name}_bin", target, []))
    return out


def generated_sets(kind, seeds, cache):
    os.makedirs(cache, exist_ok=True)
    missing = [s for s in seeds if not os.path.exists(os.path.join(cache, f"{kind}_{s}.csv"))]
    if missing:
        subprocess.run([sys.executable, os.path.join(HERE, "..", "common", "shape_generators.py"), cache, "--kind", kind,
                        "--seeds", ",".join(map(str, missing))], check=True, capture_output=True)
    return [(f"{kind}_{s}", os.path.join(cache, f"{kind}_{s}.csv"), []) for s in seeds]


def group_sets(group, out_dir):
    cache = os.path.join(out_dir, "data")
    if group == "openml-sel":
        return openml_sets("selection")
    if group == "openml-val":
        return openml_sets("validation")
    if group == "tables":
        return table_sets()
    if group == "sel-binarized":
        return binarized_sets(os.path.join(cache, "binarized"))
    if group == "sel-subsets":
        return subset_sets(os.path.join(cache, "subsets"))
    if group == "sklearn":
        return sklearn_sets(os.path.join(cache, "sklearn"))
    if group == "mlbench":
        return export_mlbench(os.path.join(cache, "mlbench"))
    kind, _, half = group.partition("-")
    seeds = {"": range(0, 12), "val": range(1000, 1012), "fresh": range(2000, 2012)}[half]
    return generated_sets(kind, list(seeds), os.path.join(cache, "generated"))


def run(cmd):
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)}: {p.stderr.strip()}")
    return json.loads(p.stdout)


def summarize(done, groups, settings, out_dir):
    for group in groups:
        sets = group_sets(group, out_dir)
        print(f"\n== {group} ({len(sets)} sets)")
        print(f"{'setting':28s} {'median gap':>10s} {'mean gap':>9s} {'norm. med':>9s} {'worst':>7s} {'>8 behind':>9s} {'ahead':>6s}")
        for setting in settings:
            gaps, norm = [], []
            for name, _, _ in sets:
                k, r = done.get((name, "knn")), done.get((name, setting))
                if not k or not r or "error" in k or "error" in r:
                    continue
                gaps.append(100 * (k["accuracy"] - r["accuracy"]))
                norm.append(1 - r["accuracy"] / k["accuracy"])
            if gaps:
                print(f"{setting:28s} {statistics.median(gaps):10.2f} {statistics.mean(gaps):9.2f} "
                      f"{statistics.median(norm):9.4f} {max(gaps):7.1f} {sum(g > 8 for g in gaps):9d} "
                      f"{sum(g < 0 for g in gaps):6d}  (n={len(gaps)})")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("flynn")
    ap.add_argument("out_dir")
    ap.add_argument("--groups", default=",".join(GROUPS_SELECTION))
    ap.add_argument("--settings", default="default")
    ap.add_argument("--folds", type=int, default=5)
    ap.add_argument("--threads", default="1")
    ap.add_argument("--summary", action="store_true")
    ap.add_argument("--per-set", metavar="SETTING", default="", help="print one line per set")
    a = ap.parse_args()
    os.makedirs(a.out_dir, exist_ok=True)
    out = os.path.join(a.out_dir, "results.jsonl")
    done = {}
    if os.path.exists(out):
        for line in open(out):
            j = json.loads(line)
            done[(j["dataset"], j["setting"])] = j
    groups, settings = a.groups.split(","), a.settings.split(",")
    if a.per_set:
        for group in groups:
            for name, _, _ in group_sets(group, a.out_dir):
                k, r = done.get((name, "knn"), {}), done.get((name, a.per_set), {})
                if "accuracy" in k and "accuracy" in r:
                    print(f"{group:10s} {name:40s} kNN {k['accuracy']:.3f} ({k.get('which')}) FlyNN {r['accuracy']:.3f} gap {100 * (k['accuracy'] - r['accuracy']):+.1f}")
        return
    if not a.summary:
        for group in groups:
            for name, path, flags in group_sets(group, a.out_dir):
                for setting in ["knn"] + settings:
                    if (name, setting) in done:
                        continue
                    base = [a.flynn, "eval", "--data", path, "--json", "--quiet", "--threads", a.threads,
                            "--folds", str(a.folds)] + flags
                    try:
                        if setting == "knn":
                            j = run(base + ["--knn", "--m", "64", "--s", "1", "--rho", "2", "--variant", "paper"])
                            l2, z = j["knn"], j["knn_standardized"]
                            best = max((l2["accuracy_mean"], "l2", l2["best_k"]), (z["accuracy_mean"], "std", z["best_k"]))
                            rec = {"dataset": name, "group": group, "setting": "knn", "accuracy": best[0],
                                   "which": f"{best[1]} k={best[2]}", "d": j["features"], "L": j["classes"]}
                        elif not expand(SETTINGS[setting], done[(name, "knn")]["d"]) and setting != "default" \
                                and "accuracy" in done.get((name, "default"), {}):
                            # the setting is the default on this set (a rule for other shapes)
                            rec = dict(done[(name, "default")], setting=setting)
                        else:
                            j = run(base + expand(SETTINGS[setting], done[(name, "knn")]["d"]))
                            rec = {"dataset": name, "group": group, "setting": setting,
                                   "accuracy": j["accuracy_mean"], "balanced_accuracy": j.get("balanced_accuracy"),
                                   "seconds": j["seconds"], "config": j["config"]}
                            if "auto" in j:  # the candidate --auto chose on each fold's training rows
                                rec["auto_chosen"] = [f["chosen"] for f in j["auto"]["folds"]]
                    except (RuntimeError, KeyError, ValueError) as e:
                        rec = {"dataset": name, "group": group, "setting": setting, "error": str(e)[-300:]}
                    done[(name, setting)] = rec
                    with open(out, "a") as f:
                        f.write(json.dumps(rec) + "\n")
                    print(json.dumps(rec)[:200], flush=True)
    summarize(done, groups, settings, a.out_dir)


if __name__ == "__main__":
    main()
