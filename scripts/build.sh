#!/usr/bin/env bash
# Configures and builds flynn (Release) into ./build. Extra arguments go to cmake's
# configure step. Uses every core unless JOBS is set.
set -euo pipefail
cd "$(dirname "$0")/.."
JOBS=${JOBS:-$(nproc)}
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release "$@"
cmake --build build -j"$JOBS"
