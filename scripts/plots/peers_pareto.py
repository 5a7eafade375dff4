#!/usr/bin/env python3
"""`flynn bench --peers`: accuracy against one-thread prediction time (log x), FlyNN's settings
beside the nearest-neighbour indexes, the Pareto front drawn as a step line.

Usage: peers_pareto.py PEERS.csv OUT.png THREADS
  PEERS.csv is the benchmark's peers.csv; THREADS (the "all threads" count) goes in the title.
"""
import matplotlib
matplotlib.use('Agg')
import csv, sys
import matplotlib.pyplot as plt
peers, out, threads = sys.argv[1], sys.argv[2], sys.argv[3]
rows = list(csv.DictReader(open(peers)))
for r in rows:
    r['t'] = float(r['predict_seconds_1t'])
    r['acc'] = float(r['accuracy'])
methods = []
for r in rows:
    if r['method'] not in methods: methods.append(r['method'])
fig, ax = plt.subplots(figsize=(9, 5.5))
markers = 'osD^v<>ph*'
for i, m in enumerate(methods):
    pts = sorted((r['t'], r['acc'], r['label']) for r in rows if r['method'] == m)
    flynn = m == 'FlyNN'
    t, a, names = zip(*pts)
    ax.plot(t, a, ls='' if flynn else '-', marker='*' if flynn else markers[i % len(markers)],
            ms=12 if flynn else 6, color='crimson' if flynn else plt.get_cmap('tab10')(i), label=m)
    for x, y, n in pts:
        ax.annotate(n.replace('FlyNN ', '') if flynn else n.split(' ')[-1], (x, y), fontsize=7,
                    xytext=(4, 3), textcoords='offset points')
front = sorted((r['t'], r['acc']) for r in rows if r['pareto'] == '1')
if front:
    xs, ys = [], []
    for x, y in front:
        if xs:
            xs.append(x); ys.append(ys[-1])
        xs.append(x); ys.append(y)
    ax.plot(xs, ys, 'k:', lw=1, label='Pareto front')
ax.set_xscale('log')
ax.set_xlabel('prediction time of the test rows, one thread (s, log scale)')
ax.set_ylabel('accuracy')
ax.set_title(f'Fashion-MNIST: FlyNN vs nearest-neighbour indexes (k = 10 vote; {threads} threads for "all")')
ax.grid(alpha=0.3, which='both')
ax.legend(fontsize=8, loc='lower right')
fig.tight_layout()
fig.savefig(out, dpi=110)
