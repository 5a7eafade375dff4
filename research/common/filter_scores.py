"""FlyNN's relative filter scoring (include/flynn/scoring.hpp: filter_table, relative_scales,
score_winners) in numpy, for the probes that score hashes (FlyNNClassifier.hash) against
counts they build or alter themselves. Lower scores are nearer, as in the library."""
import numpy as np


def class_counts(H, y, n_classes, m):
    """L × m counts: how often each class's rows (winners H, rows × ρ; labels y) won each unit."""
    C = np.zeros((n_classes, m))
    for c in range(n_classes):
        np.add.at(C[c], H[y == c].ravel(), 1)
    return C


def relative_table(C, gamma, weights=None):
    """L × m filter values γ^(w_l·c) of counts C, each class divided by its mean over the units."""
    T = gamma ** (C if weights is None else weights[:, None] * C)
    return T / T.mean(1, keepdims=True)


def scores(table, W):
    """n × L scores: each row's sum of the table (L × m) over its winners W (n × ρ)."""
    return table.T[W].sum(1)
