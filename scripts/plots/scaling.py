#!/usr/bin/env python3
"""Figure 2 of `flynn reproduce scaling`: training time and speed-up against the number of parties.

Usage: scaling.py SCALING.csv OUT.png CORES
  SCALING.csv is the study's scaling.csv; CORES (the cores of the machine that ran it) is
  drawn as the bound on the wall-clock speed-up.
"""
import matplotlib
matplotlib.use('Agg')
import csv, sys
import matplotlib.pyplot as plt
summary, out, cores = sys.argv[1], sys.argv[2], int(sys.argv[3])
rows = list(csv.DictReader(open(summary)))
names = []
for r in rows:
    if r['dataset'] not in names: names.append(r['dataset'])
fig, (a1, a2) = plt.subplots(1, 2, figsize=(11, 4.2))
for i, n in enumerate(names):
    pts = sorted((int(r['parties']), float(r['mean_seconds']), float(r['sd_seconds']),
                  float(r['speedup']), float(r['speedup_sd']), float(r['cpu_speedup']))
                 for r in rows if r['dataset'] == n)
    tau, m, s, sp, spsd, cpu = zip(*pts)
    c = plt.get_cmap('tab10')(i)
    a1.errorbar(tau, m, yerr=s, marker='o', color=c, capsize=3, label=n)
    a2.errorbar(tau, sp, yerr=spsd, marker='o', color=c, capsize=3, label=n + ' (wall)')
    a2.plot(tau, cpu, marker='s', ls='--', color=c, label=n + ' (CPU critical path)')
taus = sorted({int(r['parties']) for r in rows})
a2.plot(taus, taus, 'k:', lw=1, label='ideal')
a2.axhline(cores, color='red', ls='--', lw=1, label=f'cores = {cores}')
for a in (a1, a2):
    a.set_xscale('log', base=2)
    a.set_xticks(taus)
    a.set_xticklabels([str(t) for t in taus])
    a.set_xlabel('parties (tau)')
    a.grid(alpha=0.3)
a1.set_yscale('log')
a1.set_ylabel('training time (s), mean ± sd')
a1.set_title('FlyNNFL training time')
a2.set_ylabel('speed-up over tau = 1')
a2.set_title('Speed-up: wall (bounded by the cores) and CPU critical path')
a1.legend(fontsize=8)
a2.legend(fontsize=8)
fig.tight_layout()
fig.savefig(out, dpi=110)
