#!/usr/bin/env bash
# The accuracy-against-(ε, T) grid behind research/dp-utility/README.md ("Accuracy against ε"):
# every shared OpenML set with at least 5,000 rows and a 20,000-row Fashion-MNIST subsample,
# 3 and 10 parties, ε ∈ {0.5, 1, 2, 4, 8, 16}, T on powers of two and 100, the paper's
# method (the DP default) with its default m, s, ρ, γ, post-processing noise-units (the
# default), --dp-unit paper. Each repetition holds out a stratified 30 % (never trained on)
# and draws a fresh lifting matrix and fresh DP noise: 10 repetitions for binary sets, 5 for
# the others, 2 for Fashion-MNIST.
#
# Usage (from the repository root, after `cmake --build build --target flynn` and
# research/dp-utility/build.sh):
#   research/dp-utility/run_grid.sh [OUT.tsv]          (default research/dp-utility/eps_T_grid.tsv)
# Appends; sets already in OUT are skipped, so an interrupted run resumes.
# Then: python3 research/dp-utility/analyse.py OUT.tsv
set -euo pipefail
cd "$(dirname "$0")/../.."
OUT=${1:-research/dp-utility/eps_T_grid.tsv}
DATA=/work/shared/data/openml
EPS=0.5,1,2,4,8,16
TS=1,2,4,8,16,32,64,100,128,256,512,1024
FASHION_CSV=${FASHION_CSV:-build/fashion20k.csv}
# the sets (selection half first), then Fashion-MNIST
source research/dp-utility/grid_sets.sh
done_sets() { [ -f "$OUT" ] && cut -f1 "$OUT" | sort -u || true; }
for s in $SETS; do
  if done_sets | grep -qx "$s"; then continue; fi
  classes=$(awk -F'\t' -v d="${s%%_*}" '$1 == d {print $3}' $DATA/MANIFEST.tsv)
  reps=5; [ "$classes" = 2 ] && reps=10
  nice build/dp_study --data $DATA/$s.csv.gz --name $s --out "$OUT" --parties 3,10 --eps $EPS --T $TS \
    --reps $reps --postprocess noise-units
done
if ! done_sets | grep -qx fashion-mnist-20k; then
  [ -f "$FASHION_CSV" ] || python3 research/dp-utility/fashion_csv.py "$FASHION_CSV" 20000
  nice build/dp_study --data "$FASHION_CSV" --name fashion-mnist-20k --out "$OUT" --parties 3,10 --eps $EPS \
    --T $TS --reps 2 --postprocess noise-units
fi
