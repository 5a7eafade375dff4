"""m under DP on both halves (run_m_halves.sh's TSV): which m, as a multiple of d, gives the
best release at the rule's T (--dp-T auto), chosen on the SELECTION half of
research/common/heldout_split.tsv and reported on the VALIDATION half.

For each half and m multiple: the mean balanced accuracy of the release over the (set, τ, ε)
cells, the mean loss against the best multiple of each cell, the cells where it beats the
default (256·d), and the non-private model's mean balanced accuracy.

Usage: python3 research/dp-utility/analyse_m_halves.py research/dp-utility/m_halves_grid.tsv
"""
import csv
import os
import sys
from collections import defaultdict

import analyse  # this folder's: the halves and the T rule

HERE = os.path.dirname(os.path.abspath(__file__))


def rule_T(eps, tau):
    return analyse.rule_T(8, 2, eps, tau)  # as federated::auto_dp_T


def main(path):
    h = analyse.halves()
    ba = defaultdict(list)  # (set, tau, mult, eps) -> [bacc at the rule's T]
    plain = defaultdict(list)  # (set, mult) -> [non-private bacc]
    with open(path) as f:
        for row in csv.DictReader(f, delimiter="\t"):
            s, d, m = row["dataset"], int(row["d"]), int(row["m"])
            mult, tau = m // d, int(row["parties"])
            eps, T = float(row["epsilon"]), int(row["T"])
            if eps == 0:
                if tau == 3:
                    plain[(s, mult)].append(float(row["balanced_accuracy"]))
            elif T == rule_T(eps, tau):
                ba[(s, tau, mult, eps)].append(float(row["balanced_accuracy"]))
    mean = lambda v: sum(v) / len(v)
    mults = sorted({k[2] for k in ba})
    for half in ("selection", "validation"):
        cells = sorted({(s, tau, eps) for (s, tau, mult, eps) in ba if h.get(s.split("_")[0]) == half})
        if not cells:
            continue
        sets = sorted({c[0] for c in cells})
        print(f"\n{half} half: {len(sets)} sets, {len(cells)} (set, τ, ε) cells")
        print("| m | mean release | mean loss against the cell's best m | cells above 256·d | non-private |")
        print("|---|---|---|---|---|")
        for mult in mults:
            vals, losses, above = [], [], 0
            for (s, tau, eps) in cells:
                v = mean(ba[(s, tau, mult, eps)])
                best = max(mean(ba[(s, tau, x, eps)]) for x in mults)
                vals.append(v)
                losses.append(best - v)
                above += v > mean(ba[(s, tau, 256, eps)]) + 1e-12
            np_ = mean([mean(plain[(s, mult)]) for s in sets])
            print(f"| {mult}·d | {mean(vals):.3f} | {mean(losses):.3f} | {above} of {len(cells)} | {np_:.3f} |")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "m_halves_grid.tsv"))
