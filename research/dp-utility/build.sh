#!/usr/bin/env bash
# Builds build/dp_study from research/dp-utility/dp_study.cpp against the libraries of an
# existing Release build in ./build (cmake --build build --target flynn first).
set -euo pipefail
cd "$(dirname "$0")/../.."
B=build
c++ -std=c++20 -O2 -DFMT_SHARED -Isrc -Iinclude -I$B/include -Isrc/harness/include \
  research/dp-utility/dp_study.cpp -o $B/dp_study \
  $B/src/harness/libflynn_harness.a $B/src/baselines/libflynn_baselines.a $B/src/eval/libflynn_eval.a \
  $B/src/federated/libflynn_federated.a $B/src/core/libflynn_core.a \
  /usr/lib/x86_64-linux-gnu/libfaiss.a -lgomp -lblas -llapack -lcrypto -lhwy -lz -lfmt -lpthread
