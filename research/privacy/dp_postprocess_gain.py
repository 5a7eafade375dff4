#!/usr/bin/env python3
"""Paired gain of each DP post-processing over the paper's model (post-processing none), from
a `flynn reproduce privacy --dp-postprocess ...` run. Every post-processing of one unit is
scored on the SAME noisy release, so the per-release difference isolates its effect.

For every group and unit it reports, over all (epsilon, T) points and repetitions, the mean
paired difference in balanced accuracy (with its standard error), the share of points where
the mean over repetitions improved, and the difference at the T that is best for `none`
(the operating point the study's "best DP" column picks), averaged over epsilon.

Usage: dp_postprocess_gain.py PRIVACY_RAW.csv [OUT.tsv]
"""
import csv
import math
import sys
from collections import defaultdict

raw = list(csv.DictReader(open(sys.argv[1])))
out = open(sys.argv[2], 'w') if len(sys.argv) > 2 else sys.stdout
dp = [r for r in raw if r['method'] == 'dp']
key = lambda r: (r['dataset'], r['n_train'], r['m'], r['s'], r['rho'], r['gamma'])
# value[(group, unit, eps, T, rep)][postprocess] = balanced accuracy
value = defaultdict(dict)
for r in dp:
    value[(key(r), r['unit'], r['epsilon'], r['T'], r['repetition'])][r['postprocess']] = float(r['balanced_accuracy'])
posts = sorted({r['postprocess'] for r in dp} - {'none'})
groups = []
for r in dp:
    if key(r) not in groups: groups.append(key(r))
units = sorted({r['unit'] for r in dp})
out.write('dataset\tn_train\tm\ts\trho\tgamma\tunit\tpostprocess\tmean_paired_gain\tse\tpoints_improved\tpoints\t'
          'gain_at_best_T_of_none\n')
for g in groups:
    for u in units:
        # mean over repetitions per (eps, T) for none, to find none's best T per epsilon
        per_point = defaultdict(lambda: defaultdict(list))
        for (kg, ku, e, T, rep), v in value.items():
            if kg != g or ku != u: continue
            for p, a in v.items(): per_point[(e, T)][p].append(a)
        best_T = {}
        for (e, T), v in per_point.items():
            m = sum(v['none']) / len(v['none'])
            if e not in best_T or m > best_T[e][1]: best_T[e] = (T, m)
        for p in posts:
            diffs, improved, points, at_best = [], 0, 0, []
            for (e, T), v in per_point.items():
                if p not in v: continue
                d = [a - b for a, b in zip(v[p], v['none'])]
                diffs += d
                points += 1
                improved += sum(d) / len(d) > 0
                if best_T[e][0] == T: at_best.append(sum(d) / len(d))
            if not diffs: continue
            mean = sum(diffs) / len(diffs)
            sd = math.sqrt(sum((x - mean) ** 2 for x in diffs) / max(1, len(diffs) - 1))
            out.write('\t'.join(list(g) + [u, p, f'{mean:+.4f}', f'{sd / math.sqrt(len(diffs)):.4f}', str(improved),
                                            str(points), f'{sum(at_best) / len(at_best):+.4f}']) + '\n')
