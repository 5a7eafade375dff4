#!/usr/bin/env bash
# The release's utility against m (units per class filter, and so the counts each cell
# gathers) and against the exponential mechanism's exponent, behind research/dp-utility/
# README.md ("m and the exponent"): three sets (satimage and puma32H from the validation half
# of research/common/heldout_split.tsv, optdigits from the selection half), 3 and 10 parties,
# ε ∈ {1, 4, 16}, T on powers of two from 1 to 64 (the rule's T: 1, 4 and 16 at τ = 3; 1, 1 and 1 at τ = 10),
# m ∈ {32, 64, 256, 1024}·d (256·d is the default), --dp-unit paper, post-processing
# noise-units (the default); the paper's exponent at every m, the reference code's
# exponent (twice the paper's, --dp-exponent reference) at every m too. 10 repetitions
# (each its own 70/30 split, lifting matrix and noise).
#
# Usage (from the repository root, after `cmake --build build --target flynn` and
# research/dp-utility/build.sh):
#   research/dp-utility/run_m_exponent.sh [OUT.tsv]   (default research/dp-utility/m_exponent_grid.tsv)
# Then: python3 research/dp-utility/analyse_m_exponent.py OUT.tsv
set -euo pipefail
cd "$(dirname "$0")/../.."
OUT=${1:-research/dp-utility/m_exponent_grid.tsv}
DATA=/work/shared/data/openml
run() {  # set, d, reps
  local m="$((32 * $2)),$((64 * $2)),$((256 * $2)),$((1024 * $2))"
  for exponent in paper reference; do
    nice build/dp_study --data $DATA/$1.csv.gz --name $1 --out "$OUT" --parties 3,10 --eps 1,4,16 \
      --T 1,2,4,8,16,32,64 --m "$m" --reps "$3" --postprocess noise-units --exponent $exponent
  done
}
run 182_satimage 36 10
run 752_puma32H 32 10
run 28_optdigits 64 10
