#!/usr/bin/env bash
# m under DP on both halves of research/common/heldout_split.tsv (every shared OpenML set
# with at least 5,000 rows), behind research/dp-utility/README.md ("m on both halves"):
# m ∈ {32, 64, 256}·d (256·d is the default), 3 and 10 parties, ε ∈ {1, 4, 16}, T on powers
# of two from 1 to 64, the paper's exponent, noise-units, --dp-unit paper, 5 repetitions.
#
# Usage (from the repository root, after `cmake --build build --target flynn` and
# research/dp-utility/build.sh):
#   research/dp-utility/run_m_halves.sh [OUT.tsv]   (default research/dp-utility/m_halves_grid.tsv)
# Appends; sets already in OUT are skipped. Then: python3 research/dp-utility/analyse_m_halves.py OUT.tsv
set -euo pipefail
cd "$(dirname "$0")/../.."
OUT=${1:-research/dp-utility/m_halves_grid.tsv}
DATA=/work/shared/data/openml
source research/dp-utility/grid_sets.sh
done_sets() { [ -f "$OUT" ] && cut -f1 "$OUT" | sort -u || true; }
for s in $SETS; do
  if done_sets | grep -qx "$s"; then continue; fi
  # d: the features the loader reads (the grid of eps_T_grid.tsv records it)
  d=$(awk -F'\t' -v s="$s" '$1 == s {print $4; exit}' research/dp-utility/eps_T_grid.tsv)
  nice build/dp_study --data $DATA/$s.csv.gz --name $s --out "$OUT" --parties 3,10 --eps 1,4,16 \
    --T 1,2,4,8,16,32,64 --m "$((32 * d)),$((64 * d)),$((256 * d))" --reps 5 --postprocess noise-units
done
