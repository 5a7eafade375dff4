#!/usr/bin/env bash
# Builds flynn without FAISS (-DFLYNN_WITH_FAISS=OFF) into ./build-nofaiss and runs its
# tests: core, federated, eval and the CLI (train, predict, eval, tune, the federated
# commands) must build and pass without the baselines and the paper harness. Not part of
# CI's time budget (a second full build); run it when touching the target graph.
set -euo pipefail
cd "$(dirname "$0")/.."
JOBS=${JOBS:-$(nproc)}
# Not REQUIRE_ALL: that mode requires FAISS.
CI= FLYNN_REQUIRE_ALL=0 BUILD_DIR=build-nofaiss JOBS=$JOBS bash scripts/build.sh -DFLYNN_WITH_FAISS=OFF "$@"
grep -q '^#define FLYNN_HAVE_FAISS 0' build-nofaiss/include/flynn/build_config.hpp
(cd build-nofaiss && ctest -j"$JOBS" --output-on-failure --timeout 1500)
# The CLI's train, predict, eval and tune tests must be among those that ran.
for group in CliDigits TuneCli CliStreaming; do
  (cd build-nofaiss && ctest -N -R "^$group\\." | grep -q 'Total Tests: [1-9]') || { echo "no $group tests without FAISS" >&2; exit 1; }
done
echo "without FAISS: build and tests passed"
