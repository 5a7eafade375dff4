#!/bin/sh
# FlyNNFL over MPI, end to end, on this machine:
#   1. Digits split into 3 CSV shards; `mpirun -np 3 flynn federated train` on them, and a
#      byte comparison with `flynn train` on the concatenation (Theorem 4).
#   2. Fashion-MNIST split into tau = 1, 2, 4 IDX shards; the time split (local training vs
#      the all-reduce) and the bytes each party sends, without and with DP.
#
# Usage: research/federated/federated_mpi_demo.sh [BUILD_DIR] [WORK_DIR]   (defaults: build, a temp dir)
# Needs Open MPI (mpirun) and a flynn built with it. --oversubscribe lets 4 ranks share 2 cores;
# OMPI_ALLOW_RUN_AS_ROOT* make it work as root in containers.
set -eu
BUILD=${1:-build}
WORK=${2:-$(mktemp -d)}
FLYNN=$(cd "$BUILD" && pwd)/flynn
HERE=$(cd "$(dirname "$0")" && pwd)
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
MPIRUN="mpirun --oversubscribe"
DIGITS=/usr/lib/python3/dist-packages/sklearn/datasets/data/digits.csv.gz
mkdir -p "$WORK"
cd "$WORK"

echo "== 1. Digits, 3 ranks, byte-identical to central training"
gzip -dc "$DIGITS" > all.csv
n=$(wc -l < all.csv)
split -d -a 1 -l $(( (n + 2) / 3 )) all.csv shard_ && for r in 0 1 2; do mv "shard_$r" "shard_$r.csv"; done
$MPIRUN -np 3 "$FLYNN" federated train --data 'shard_{rank}.csv' --labels 0,1,2,3,4,5,6,7,8,9 \
  --model fed.model --seed 7 --threads 1 -q
"$FLYNN" train --data all.csv --labels 0,1,2,3,4,5,6,7,8,9 --model central.model --seed 7 -q > /dev/null
cmp fed.model central.model && echo "fed.model and central.model are byte-identical"

echo "== 2. Fashion-MNIST (spec hyper-parameters), tau = 1, 2, 4"
HP="--expansion-factor 138 --connection-sparsity 0.105 --wta-nnz 8 --gamma 0.8 --seed 5489"
for tau in 1 2 4; do
  python3 "$HERE/federated_fashion_shards.py" "fm$tau" "$tau" > /dev/null
  for dp in "" "--dp-epsilon 1 --dp-T 600"; do
    $MPIRUN -np "$tau" "$FLYNN" federated train --data "fm$tau/shard_{rank}-images-idx3-ubyte" \
      --labels 0,1,2,3,4,5,6,7,8,9 --model "fm$tau.model" $HP $dp --threads 1 --json > "fm$tau${dp:+-dp}.json"
    python3 - "fm$tau${dp:+-dp}.json" "$tau" "${dp:-no DP}" <<'EOF'
import json, sys
j = json.load(open(sys.argv[1]))
p = j["parties_detail"]
local = max(x["seconds"]["local"] for x in p)
aggr = min(x["seconds"]["aggregate"] for x in p)
train = max(x["seconds"]["training"] for x in p)
sent = p[0]["aggregation_bytes"]["sent"]
print(f"tau={sys.argv[2]} ({sys.argv[3]}): local {local:.3f} s, all-reduce/all-gather {aggr:.4f} s, "
      f"training {train:.3f} s, counts message {sent} bytes per party, "
      f"total sent {p[0]['bytes_sent']} bytes")
EOF
  done
done
echo "outputs in $WORK"
