#!/usr/bin/env bash
# Configures and builds flynn (Release) into ./build (BUILD_DIR to change it). Extra
# arguments go to cmake's configure step. Uses every core unless JOBS is set; BUILD_TARGETS
# (space-separated) builds only those targets.
set -euo pipefail
cd "$(dirname "$0")/.."
JOBS=${JOBS:-$(nproc)}
BUILD_DIR=${BUILD_DIR:-build}
# ccache (when installed) makes rebuilds after small changes, and CI reruns, cheap; paths
# relative to the checkout let a fresh clone in another folder reuse the cache.
export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$PWD} CCACHE_NOHASHDIR=${CCACHE_NOHASHDIR:-true}
LAUNCHER=()
if command -v ccache >/dev/null; then LAUNCHER=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache); fi
GEN=()
if command -v ninja >/dev/null && [ ! -f "$BUILD_DIR/CMakeCache.txt" ]; then GEN=(-G Ninja); fi
# CI mode: every optional component (gRPC, MPI, FAISS, Python 3 for the hostile suite) is
# REQUIRED and warnings are errors, so CI cannot pass by building less.
REQUIRE=()
if [ "${CI:-}" = true ] || [ "${FLYNN_REQUIRE_ALL:-0}" = 1 ]; then REQUIRE=(-DFLYNN_REQUIRE_ALL=ON); fi
cmake -S . -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=Release "${GEN[@]}" "${LAUNCHER[@]}" "${REQUIRE[@]}" "$@"
TARGETS=()
for t in ${BUILD_TARGETS:-}; do TARGETS+=(--target "$t"); done
cmake --build "$BUILD_DIR" -j"$JOBS" "${TARGETS[@]}"
