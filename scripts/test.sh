#!/usr/bin/env bash
# Everything CI checks, on a fresh Debian machine: install, build, the test suite
# (unit, property, CLI end-to-end, MPI end-to-end), the benchmark smoke runs, a sanitizer
# (ASan + UBSan) build of the test suite, a short run of every fuzz target, the Python
# package's tests and the documentation (its site, its reference check, the guide's examples).
#
#   bash scripts/test.sh              all stages
#   STAGES="unit bench" bash scripts/test.sh   a subset (unit install bench sanitize fuzz python docs)
set -euo pipefail
cd "$(dirname "$0")/.."
STAGES=${STAGES:-"unit install bench sanitize fuzz python docs"}
JOBS=${JOBS:-$(nproc)}
FUZZ_SECONDS=${FUZZ_SECONDS:-20}
export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$PWD} CCACHE_NOHASHDIR=${CCACHE_NOHASHDIR:-true}
# What CI checks is the build with every component (scripts/build.sh: FLYNN_REQUIRE_ALL).
export FLYNN_REQUIRE_ALL=${FLYNN_REQUIRE_ALL:-1}
has() { [[ " $STAGES " == *" $1 "* ]]; }
stage() { echo; echo "=== $* ($(date +%T))"; }

bash scripts/setup.sh

stage "build (Release)"
JOBS=$JOBS bash scripts/build.sh

if has unit; then
  stage "test suite"
  # One ctest entry per test (gtest_discover_tests), run $JOBS at a time: every test
  # works in its own temporary directory.
  (cd build && ctest -j"$JOBS" --output-on-failure --timeout 1500 --output-junit ctest-junit.xml)
  # ctest counts a GTEST_SKIP as passed: fail if a whole test group did not run.
  python3 scripts/check_test_groups.py build/ctest-junit.xml
fi

if has install; then
  stage "install + the examples/cpp consumer project (links flynn::core only)"
  prefix=$(pwd)/build/install-prefix
  rm -rf "$prefix" build/example-cpp
  cmake --install build --prefix "$prefix" >/dev/null
  cmake -S examples/cpp -B build/example-cpp -DCMAKE_PREFIX_PATH="$prefix" >/dev/null
  cmake --build build/example-cpp -j"$JOBS" >/dev/null
  gzip -dc /usr/lib/python3/dist-packages/sklearn/datasets/data/digits.csv.gz > build/example-cpp/digits.csv
  ./build/example-cpp/flynn_example build/example-cpp/digits.csv build/example-cpp/digits.flynn
  ./build/example-cpp/flynn_in_memory_example
fi

if has bench; then
  stage "benchmark smoke runs"
  ./build/bench/flynn_bench --benchmark_min_time=0.01 --benchmark_filter='BM_(TopK|Score)|BM_Hash/d:20/' >/dev/null
  ./build/flynn bench --smoke --quiet
  # The peer comparison and the file-vs-in-process figure on 3000 rows (about a minute).
  ./build/flynn bench --smoke --peers --quiet --out build/bench-peers-smoke >/dev/null
  ./build/flynn bench --smoke --file-path --quiet >/dev/null
fi

if has sanitize; then
  stage "sanitizer build (ASan + UBSan) and test suite"
  launcher=()
  if command -v ccache >/dev/null; then launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache); fi
  cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DFLYNN_SANITIZE=ON -DFLYNN_BUILD_BENCH=OFF "${launcher[@]}"
  cmake --build build-asan -j"$JOBS"
  # LeakSanitizer flags OpenMPI's and FAISS's intentional process-lifetime allocations;
  # memory errors and undefined behaviour still fail the run.
  # The study pipelines that take over 30 s each in Release (cross-validated --auto, every
  # setting through MPI and gRPC, the paper's privacy and scaling studies) run only in the
  # Release stage above: under the sanitizers they cost minutes each and reach no code the
  # other tests do not.
  slow='^(AutoCrossValidation\.|AutoChoice\.Deterministic|SettingsTravel\.EverySetting|EvalReproduceCli\.SyntheticQuickTables|FederatedCli\.(PrivacyStudy|ReproduceScaling)|TuneCli\.TrainAuto)'
  (cd build-asan && ASAN_OPTIONS=detect_leaks=0:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
     ctest -j"$JOBS" --output-on-failure --timeout 2400 -E "$slow")
fi

if has fuzz; then
  stage "fuzz targets (${FUZZ_SECONDS}s each)"
  FLYNN_FUZZ_JOBS=$JOBS bash scripts/run_fuzz.sh "$FUZZ_SECONDS"
fi

if has python; then
  stage "Python package: offline install into a venv, pytest (tests/python)"
  # Debian's interpreter by name: the first python3 on PATH may be another one without
  # Debian's numpy/scikit-learn/pybind11 (docs/guide/python.md).
  rm -rf build-python/venv
  /usr/bin/python3 -m venv --system-site-packages build-python/venv
  FLYNN_BUILD_JOBS=$JOBS build-python/venv/bin/pip install --quiet --no-build-isolation --no-index .
  # From outside the checkout, so the tests import the installed package; the CLI parity
  # tests use this build's CLI and must not be skipped, nor must the flynn.dask tests
  # (python3-dask and python3-distributed are in scripts/setup.sh).
  (cd build-python && FLYNN_CLI="$PWD/../build/flynn" FLYNN_REQUIRE_CLI=1 FLYNN_REQUIRE_DASK=1 \
     venv/bin/python -m pytest -q -p no:cacheprovider ../tests/python)
fi

if has docs; then
  stage "documentation: the site (warnings are errors), its reference check, the guide's examples"
  # The python stage has just installed the package into build-python/venv from this tree.
  reuse=0
  if has python; then reuse=1; fi
  FLYNN_DOCS_REUSE_VENV=$reuse JOBS=$JOBS bash scripts/docs.sh
  # Every sh and python block of docs/guide runs on small data (a few minutes), with the
  # signature and documentation of the estimator checked against the table of settings.
  (cd build-python && FLYNN_CLI="$PWD/../build/flynn" venv/bin/python -m pytest -q -p no:cacheprovider ../tests/docs)
fi

stage "all stages passed"
