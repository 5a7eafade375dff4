#!/usr/bin/env python3
"""`flynn reproduce privacy` with several privacy units / post-processings: for every group
(data set and setting), the best balanced accuracy over T against epsilon, one line per
variant (unit, post-processing), the paper's variant (unit paper, post-processing none) in
black, the non-private model dashed.

Usage: privacy_variants.py BEST.csv OUT.png
  BEST.csv is the study's privacy_best.csv (with its unit and postprocess columns).
"""
import matplotlib
matplotlib.use('Agg')
import csv, math, sys
import matplotlib.pyplot as plt
best, out = sys.argv[1:3]
rows = list(csv.DictReader(open(best)))
groups, variants = [], []
for r in rows:
    g = (r['dataset'], r['n_train'], r['setting'])
    v = (r['unit'], r['postprocess'])
    if g not in groups: groups.append(g)
    if v not in variants: variants.append(v)
cols = 3 if len(groups) > 4 else max(1, len(groups))
nrows = math.ceil(len(groups) / cols)
fig, axes = plt.subplots(nrows, cols, figsize=(5.2 * cols, 3.8 * nrows), squeeze=False)
styles = {'paper': '-', 'record': '--'}
others = [v for v in variants if v != ('paper', 'none')]
for gi, g in enumerate(groups):
    ax = axes[gi // cols][gi % cols]
    gr = [r for r in rows if (r['dataset'], r['n_train'], r['setting']) == g]
    for v in variants:
        pts = sorted((float(r['epsilon']), float(r['best_mean']), float(r['best_sd']))
                     for r in gr if (r['unit'], r['postprocess']) == v)
        if not pts: continue
        e, m, s = zip(*pts)
        if v == ('paper', 'none'):
            c, lw, z = 'black', 2.2, 3
        else:
            c, lw, z = plt.get_cmap('tab10')(others.index(v) % 10), 1.3, 2
        ax.plot(e, m, marker='o', ms=3, lw=lw, zorder=z, color=c, ls=styles.get(v[0], ':'),
                label=f'{v[0]} unit, {v[1]}' + (' (paper)' if v == ('paper', 'none') else ''))
    ax.axhline(float(gr[0]['nonprivate_mean']), color='grey', ls=':', lw=1.2, label='non-private')
    ax.set_title(f'{g[0]} n={g[1]} ({g[2]})', fontsize=8)
    ax.set_xlabel('epsilon (total budget)')
    ax.set_ylabel('best balanced accuracy over T')
    ax.grid(alpha=0.3)
    if gi == 0: ax.legend(fontsize=6)
for k in range(len(groups), nrows * cols): axes[k // cols][k % cols].axis('off')
fig.tight_layout()
fig.savefig(out, dpi=80)
