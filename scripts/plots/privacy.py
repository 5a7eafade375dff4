#!/usr/bin/env python3
"""Figure 3 of `flynn reproduce privacy`: balanced accuracy against T per epsilon (one panel per
group), and the best accuracy over T against epsilon.

Usage: privacy.py SUMMARY.csv BEST.csv OUT_VS_T.png OUT_VS_EPSILON.png
  SUMMARY.csv and BEST.csv are the study's privacy_summary.csv and privacy_best.csv.
When the study compared several privacy units / post-processings, these plots show the
first one (the paper's when it was run); privacy_variants.py plots them all.
"""
import matplotlib
matplotlib.use('Agg')
import csv, sys, math
import matplotlib.pyplot as plt
summary, best, out_t, out_eps = sys.argv[1:5]
rows = list(csv.DictReader(open(summary)))
def variant(r): return (r.get('unit', 'paper'), r.get('postprocess', 'none'))
dp_variants = [variant(r) for r in rows if r['method'] == 'dp']
shown = ('paper', 'none') if ('paper', 'none') in dp_variants else (dp_variants[0] if dp_variants else None)
rows = [r for r in rows if r['method'] != 'dp' or variant(r) == shown]
groups = []
for r in rows:
    if r['group'] not in groups: groups.append(r['group'])
eps_list = sorted({float(r['epsilon']) for r in rows if r['method'] == 'dp'})
cols = 3 if len(groups) > 4 else max(1, len(groups))
nrows = math.ceil(len(groups) / cols)
fig, axes = plt.subplots(nrows, cols, figsize=(5.2 * cols, 3.8 * nrows), squeeze=False)
cmap = plt.get_cmap('viridis')
for gi, g in enumerate(groups):
    ax = axes[gi // cols][gi % cols]
    gr = [r for r in rows if r['group'] == g]
    for ei, e in enumerate(eps_list):
        pts = sorted((int(r['T']), float(r['mean']), float(r['sd'])) for r in gr
                     if r['method'] == 'dp' and float(r['epsilon']) == e)
        if not pts: continue
        t, m, s = zip(*pts)
        c = cmap(ei / max(1, len(eps_list) - 1))
        ax.plot(t, m, marker='o', ms=3, color=c, label=f'eps={e:g}')
        ax.fill_between(t, [a - b for a, b in zip(m, s)], [a + b for a, b in zip(m, s)], color=c, alpha=0.15)
    npv = [float(r['mean']) for r in gr if r['method'] == 'non-private']
    if npv: ax.axhline(npv[0], color='black', ls='--', lw=1.2, label='non-private')
    ax.set_xscale('log')
    ax.set_title(g, fontsize=8)
    ax.set_xlabel('T (entries released per party)')
    ax.set_ylabel('balanced accuracy')
    ax.grid(alpha=0.3)
    if gi == 0: ax.legend(fontsize=7)
for k in range(len(groups), nrows * cols): axes[k // cols][k % cols].axis('off')
fig.tight_layout()
fig.savefig(out_t, dpi=110)

brows = [r for r in csv.DictReader(open(best)) if variant(r) == shown]
kinds = []
for r in brows:
    k = r['dataset'] + ' n=' + r['n_train']
    if k not in kinds: kinds.append(k)
fig, axes = plt.subplots(1, len(kinds), figsize=(5.2 * len(kinds), 4), squeeze=False)
for ki, k in enumerate(kinds):
    ax = axes[0][ki]
    kr = [r for r in brows if r['dataset'] + ' n=' + r['n_train'] == k]
    settings = []
    for r in kr:
        if r['setting'] not in settings: settings.append(r['setting'])
    for si, st in enumerate(settings):
        pts = sorted((float(r['epsilon']), float(r['best_mean']), float(r['best_sd']), float(r['nonprivate_mean']))
                     for r in kr if r['setting'] == st)
        e, m, s, npv = zip(*pts)
        c = plt.get_cmap('tab10')(si)
        ax.errorbar(e, m, yerr=s, marker='o', ms=4, color=c, capsize=3, label=st)
        ax.axhline(npv[0], color=c, ls='--', lw=1)
    ax.set_title(k + ' (dashed: non-private)', fontsize=9)
    ax.set_xlabel('epsilon (total budget)')
    ax.set_ylabel('best balanced accuracy over T')
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7)
fig.tight_layout()
fig.savefig(out_eps, dpi=110)
