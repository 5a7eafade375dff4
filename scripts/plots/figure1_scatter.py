#!/usr/bin/env python3
"""Figure 1 of `flynn reproduce openml`: FlyNN accuracy against one baseline's, one point per
dataset.

Usage: figure1_scatter.py DATA.csv OUT.png BASELINE_NAME TITLE
  DATA.csv has the columns dataset,baseline,flynn (accuracies in [0, 1]).
"""
import matplotlib
matplotlib.use('Agg')
import csv, sys
import matplotlib.pyplot as plt
src, png, name, title = sys.argv[1:5]
xs, ys = [], []
with open(src) as f:
    for row in csv.DictReader(f):
        xs.append(float(row['baseline'])); ys.append(float(row['flynn']))
fig, ax = plt.subplots(figsize=(4.2, 4.2), dpi=120)
lo = min(xs + ys) - 0.02
lo = max(0.0, lo)
ax.plot([lo, 1.0], [lo, 1.0], color='grey', lw=1, ls='--', zorder=1)
better = [y > x for x, y in zip(xs, ys)]
ax.scatter([x for x, b in zip(xs, better) if b], [y for y, b in zip(ys, better) if b],
           s=14, color='tab:blue', label='FlyNN better', zorder=2)
ax.scatter([x for x, b in zip(xs, better) if not b], [y for y, b in zip(ys, better) if not b],
           s=14, color='tab:red', label='FlyNN not better', zorder=2)
ax.set_xlim(lo, 1.0); ax.set_ylim(lo, 1.0)
ax.set_xlabel(name + ' accuracy'); ax.set_ylabel('FlyNN accuracy')
ax.set_title(title, fontsize=9)
ax.legend(loc='lower right', fontsize=7)
fig.tight_layout()
fig.savefig(png)
