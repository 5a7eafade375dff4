"""Chooses the rule for T and writes the accuracy-against-ε table (research/dp-utility/README.md).

Usage: python3 research/dp-utility/analyse.py [GRID.tsv]   (default research/dp-utility/eps_T_grid.tsv)

Reads run_grid.sh's raw rows (one per data set, parties, repetition, ε, T; ε = 0 is the
non-private model of the same hash) and
  1. chooses the rule T = 2^round(log2(k·ε/τ^b)), clamped to [1, 1024], over k = 2^-4 … 2^12
     and b ∈ {0, 1, 2} (b = 0 with the ε term dropped too: a constant T), by the mean loss of
     balanced accuracy against the best T of the grid, averaged over the (set, τ, ε) cells of
     the SELECTION half of research/common/heldout_split.tsv only;
  2. reports that loss, and the constant T = 100's, on the validation half and Fashion-MNIST;
  3. writes table.tsv (means over repetitions, every set, τ, ε: non-private, the rule's T,
     T = 100, the best T of the grid), table.md (the same as two compact markdown tables) and
     binary_seeds.tsv (binary sets: mean balanced
     accuracy over the repetitions at the rule's T and at T = 100, with the lowest and highest).
Only the standard library: runs anywhere python3 does.
"""
import csv
import math
import os
import sys
from collections import defaultdict

HERE = os.path.dirname(os.path.abspath(__file__))
GRID = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "eps_T_grid.tsv")
T_MAX = 1024


def halves():
    out = {}
    with open(os.path.join(HERE, "..", "common", "heldout_split.tsv")) as f:
        for row in csv.DictReader(f, delimiter="\t"):
            out[row["did"]] = row["half"]
    return out


def half_of(name, h):
    if name.startswith("fashion"):
        return "fashion"
    return h.get(name.split("_")[0], "?")


def rule_T(k, b, eps, tau, const=False):
    x = k if const else k * eps / tau ** b
    return int(min(T_MAX, max(1, 2 ** math.floor(math.log2(x) + 0.5))))


def main():
    h = halves()
    reps = defaultdict(list)  # (set, tau, eps, T) -> [(acc, bacc)]
    info = {}
    with open(GRID) as f:
        for row in csv.DictReader(f, delimiter="\t"):
            key = (row["dataset"], int(row["parties"]), float(row["epsilon"]), int(row["T"]))
            reps[key].append((float(row["accuracy"]), float(row["balanced_accuracy"])))
            info[row["dataset"]] = (int(row["classes"]), float(row["majority"]), int(row["m"]), int(row["rho"]),
                                    int(row["n_train"]), int(row["n_test"]))
    mean = {k: (sum(a for a, _ in v) / len(v), sum(b for _, b in v) / len(v), len(v)) for k, v in reps.items()}
    cells = sorted({(s, t, e) for (s, t, e, T) in mean if e > 0})
    grid_T = sorted({T for (_, _, e, T) in mean if e > 0})
    best = {}
    for (s, t, e) in cells:
        best[(s, t, e)] = max((mean[(s, t, e, T)][1], T) for T in grid_T if (s, t, e, T) in mean)

    def loss(fn, half):
        ls = [best[c][0] - mean[(c[0], c[1], c[2], fn(c[2], c[1]))][1] for c in cells
              if half_of(c[0], h) == half and (c[0], c[1], c[2], fn(c[2], c[1])) in mean]
        return sum(ls) / len(ls) if ls else float("nan"), len(ls)

    candidates = []
    for j in range(-4, 13):
        k = 2.0 ** j
        for b in (0, 1, 2):
            candidates.append((f"T = pow2(2^{j}·ε/τ^{b})", lambda e, t, k=k, b=b: rule_T(k, b, e, t), (k, b, False)))
        candidates.append((f"T = {2 ** j:g} (constant)", lambda e, t, k=k: rule_T(k, 0, e, t, True), (k, 0, True)))
    candidates.append(("T = 100 (constant)", lambda e, t: 100, (100, 0, True)))
    scored = sorted(((loss(fn, "selection")[0], name, fn, p) for name, fn, p in candidates), key=lambda x: x[0])
    print("rule candidates on the SELECTION half (mean balanced-accuracy loss against the grid's best T):")
    for l, name, _, _ in scored[:8]:
        print(f"  {l:.4f}  {name}")
    l100 = loss(lambda e, t: 100, "selection")[0]
    print(f"  {l100:.4f}  T = 100 (constant)")
    _, rule_name, rule, params = scored[0]
    print(f"chosen: {rule_name}  (k = {params[0]:g}, b = {params[1]})")
    for half in ("selection", "validation", "fashion"):
        lr, nr = loss(rule, half)
        lc, _ = loss(lambda e, t: 100, half)
        print(f"{half:10s}: loss of the rule {lr:.4f}, of T = 100 {lc:.4f} over {nr} (set, τ, ε) cells")

    with open(os.path.join(HERE, "table.tsv"), "w") as out:
        out.write("dataset\thalf\tclasses\tn_train\tn_test\tmajority\tm\trho\tparties\tepsilon\treps\t"
                  "nonprivate_acc\tnonprivate_bacc\trule_T\trule_acc\trule_bacc\tT100_acc\tT100_bacc\tbest_T\tbest_bacc\n")
        for (s, t, e) in cells:
            L, maj, m, rho, ntr, nte = info[s]
            np_ = mean[(s, t, 0.0, 0)]
            T = rule(e, t)
            r = mean.get((s, t, e, T), (float("nan"),) * 3)
            c = mean[(s, t, e, 100)]
            out.write(f"{s}\t{half_of(s, h)}\t{L}\t{ntr}\t{nte}\t{maj:.4f}\t{m}\t{rho}\t{t}\t{e:g}\t{r[2]}\t"
                      f"{np_[0]:.4f}\t{np_[1]:.4f}\t{T}\t{r[0]:.4f}\t{r[1]:.4f}\t{c[0]:.4f}\t{c[1]:.4f}\t"
                      f"{best[(s, t, e)][1]}\t{best[(s, t, e)][0]:.4f}\n")
    # table.md: the compact tables of the README and the guide, rows (set, τ), a column per ε.
    eps = sorted({e for (_, _, e) in cells})
    order = {"selection": 0, "validation": 1, "fashion": 2}
    sets = sorted({s for (s, _, _) in cells}, key=lambda s: (order.get(half_of(s, h), 3), int(s.split("_")[0])
                                                            if s[0].isdigit() else 0))
    with open(os.path.join(HERE, "table.md"), "w") as out:
        for metric, col, what in (("balanced accuracy", 1, "bacc"), ("accuracy", 0, "acc")):
            out.write(f"\n{metric} on the hold-out, mean over the repetitions: the rule's T, (T = 100)\n\n")
            out.write("| data | half | τ | majority | non-private | " +
                      " | ".join(f"ε = {e:g}" for e in eps) + " |\n")
            out.write("|---|---|---|---|---|" + "---|" * len(eps) + "\n")
            for s in sets:
                for t in sorted({t for (x, t, _) in cells if x == s}):
                    L, maj, *_ = info[s]
                    row = [s.split("_", 1)[-1] + f" ({L})", half_of(s, h), str(t), f"{maj:.2f}",
                           f"{mean[(s, t, 0.0, 0)][col]:.2f}"]
                    for e in eps:
                        r = mean.get((s, t, e, rule(e, t)))
                        c = mean.get((s, t, e, 100))
                        row.append(f"{r[col]:.2f} ({c[col]:.2f})" if r and c else "–")
                    out.write("| " + " | ".join(row) + " |\n")
    with open(os.path.join(HERE, "binary_seeds.tsv"), "w") as out:
        out.write("dataset\thalf\tparties\tepsilon\treps\trule_T\trule_bacc_mean\trule_bacc_min\trule_bacc_max\t"
                  "T100_bacc_mean\tT100_bacc_min\tT100_bacc_max\n")
        below = []
        for (s, t, e) in cells:
            if info[s][0] != 2:
                continue
            T = rule(e, t)
            rv = [b for _, b in reps[(s, t, e, T)]]
            cv = [b for _, b in reps[(s, t, e, 100)]]
            out.write(f"{s}\t{half_of(s, h)}\t{t}\t{e:g}\t{len(rv)}\t{T}\t{sum(rv) / len(rv):.4f}\t{min(rv):.4f}\t"
                      f"{max(rv):.4f}\t{sum(cv) / len(cv):.4f}\t{min(cv):.4f}\t{max(cv):.4f}\n")
            for label, v in (("rule", rv), ("T=100", cv)):
                if sum(v) / len(v) < 0.5:
                    below.append(f"{s} τ={t} ε={e:g} {label}: {sum(v) / len(v):.4f}")
        print("binary cells averaging below 0.5 balanced accuracy:", below or "none")


if __name__ == "__main__":
    main()
