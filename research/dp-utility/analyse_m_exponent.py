"""Tables of research/dp-utility/README.md ("m and the exponent") from run_m_exponent.sh's TSV.

For each set and m: the non-private balanced accuracy, then per ε the mean balanced accuracy
over the repetitions at the rule's T (--dp-T auto: 2^round(log2(8·ε/τ²))) with the paper's
exponent (within [1, 1024]), with the reference code's exponent, and the best T of the grid (paper's exponent,
chosen after the fact: an upper bound, not a rule). Holds no choice: every figure is reported
as measured.

Usage: python3 research/dp-utility/analyse_m_exponent.py research/dp-utility/m_exponent_grid.tsv
"""
import csv
import sys
from collections import defaultdict

import analyse  # this folder's: the T rule


def rule_T(eps, tau):
    return analyse.rule_T(8, 2, eps, tau)  # as federated::auto_dp_T


def main(path):
    cells = defaultdict(list)  # (set, tau, m, eps, T, exponent) -> [bacc]
    meta = {}
    with open(path) as f:
        for row in csv.DictReader(f, delimiter="\t"):
            s, m, d = row["dataset"], int(row["m"]), int(row["d"])
            tau = int(row["parties"])
            meta[(s, tau)] = (d, int(row["classes"]))
            eps, T = float(row["epsilon"]), int(row["T"])
            exponent = row.get("exponent") or "paper"
            if eps == 0:
                if exponent != "-" and exponent != "paper":
                    continue
                exponent = "-"
            cells[(s, tau, m, eps, T, exponent)].append(float(row["balanced_accuracy"]))
    mean = lambda v: sum(v) / len(v)
    for s, tau in sorted(meta, key=lambda x: (int(x[0].split("_")[0]), x[1])):
        d, L = meta[(s, tau)]
        ms = sorted({k[2] for k in cells if k[:2] == (s, tau)})
        epss = sorted({k[3] for k in cells if k[:2] == (s, tau) and k[3] > 0})
        print(f"\n{s} (d = {d}, {L} classes, τ = {tau}): balanced accuracy, mean over the repetitions;"
              " per ε: rule's T paper exponent / reference exponent / best T of the grid (paper)\n")
        head = "| m | non-private | " + " | ".join(f"ε = {e:g} (T = {rule_T(e, tau)})" for e in epss) + " |"
        print(head)
        print("|" + "---|" * (2 + len(epss)))
        for m in ms:
            np_ = cells.get((s, tau, m, 0.0, 0, "-"))
            parts = [f"{m} ({m // d}·d)", f"{mean(np_):.3f}" if np_ else "–"]
            for e in epss:
                T = rule_T(e, tau)
                p = cells.get((s, tau, m, e, T, "paper"))
                r = cells.get((s, tau, m, e, T, "reference"))
                best = max((mean(v), t) for (s2, tau2, m2, e2, t, x), v in cells.items()
                           if (s2, tau2, m2, e2, x) == (s, tau, m, e, "paper"))
                parts.append(f"{mean(p):.3f} / {mean(r):.3f} / {best[0]:.3f} (T = {best[1]})"
                             if p and r else "–")
            print("| " + " | ".join(parts) + " |")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "research/dp-utility/m_exponent_grid.tsv")
