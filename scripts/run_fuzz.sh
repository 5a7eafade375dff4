#!/usr/bin/env bash
# Builds the libFuzzer targets (fuzz/fuzz_*.cpp) with clang, AddressSanitizer and
# UndefinedBehaviorSanitizer in a separate build folder, then runs each target that has a
# seed corpus (fuzz/corpus/<target>/) for a fixed time on a COPY of that corpus, so the
# repository is never modified.
#
# Usage: scripts/run_fuzz.sh [SECONDS_PER_TARGET] [TARGET...]
#   SECONDS_PER_TARGET  default 20
#   TARGET...           e.g. fuzz_csv fuzz_idx; default: every fuzz/fuzz_*.cpp
# Environment:
#   FLYNN_FUZZ_BUILD_DIR  build folder (default: <repo>/build-fuzz)
#   FLYNN_FUZZ_JOBS       build parallelism (default 2)
#   FLYNN_FUZZ_MAX_LEN    libFuzzer -max_len (default 4096)
#   FLYNN_FUZZ_KEEP       when set, keep each run's grown corpus under <build>/fuzz-runs/
# Exit status: 0 when no target found a problem; 1 when one did (the reproducer is kept
# under <build>/fuzz-artifacts/<target>/ and its log tail is printed); 2 on a usage or
# build error.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
secs=${1:-20}
[ $# -gt 0 ] && shift
if ! [[ "$secs" =~ ^[0-9]+$ ]] || [ "$secs" -lt 1 ]; then
  echo "run_fuzz: SECONDS_PER_TARGET must be a positive integer, got '$secs'" >&2
  exit 2
fi
build=${FLYNN_FUZZ_BUILD_DIR:-$root/build-fuzz}
jobs=${FLYNN_FUZZ_JOBS:-2}
max_len=${FLYNN_FUZZ_MAX_LEN:-4096}

for tool in clang++ clang cmake; do
  command -v "$tool" >/dev/null || { echo "run_fuzz: $tool not found (scripts/setup.sh installs it)" >&2; exit 2; }
done

# Targets: the requested ones, or every fuzz/fuzz_*.cpp; only those with a corpus run.
if [ $# -gt 0 ]; then
  wanted=("$@")
else
  wanted=()
  for src in "$root"/fuzz/fuzz_*.cpp; do
    [ -e "$src" ] && wanted+=("$(basename "$src" .cpp)")
  done
fi
targets=()
for t in "${wanted[@]}"; do
  if [ ! -f "$root/fuzz/$t.cpp" ]; then
    echo "run_fuzz: no fuzz/$t.cpp" >&2
    exit 2
  fi
  if [ -d "$root/fuzz/corpus/$t" ]; then
    targets+=("$t")
  else
    echo "run_fuzz: skipping $t (no fuzz/corpus/$t/ seed folder)" >&2
  fi
done
if [ ${#targets[@]} -eq 0 ]; then
  echo "run_fuzz: nothing to run" >&2
  exit 2
fi

start=$(date +%s)
echo "run_fuzz: configuring $build"
mkdir -p "$build"
launcher=()
if command -v ccache >/dev/null; then
  export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$root} CCACHE_NOHASHDIR=${CCACHE_NOHASHDIR:-true}
  launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
fi
if ! cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo "${launcher[@]}" \
      -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_C_COMPILER=clang \
      -DFLYNN_BUILD_FUZZ=ON -DFLYNN_BUILD_TESTS=OFF -DFLYNN_BUILD_BENCH=OFF -DFLYNN_WITH_MPI=OFF -DFLYNN_BUILD_EVAL=OFF -DFLYNN_BUILD_APPS=OFF -DFLYNN_WITH_GRPC=OFF \
      >"$build/configure.log" 2>&1; then
  cat "$build/configure.log" >&2
  echo "run_fuzz: configure failed" >&2
  exit 2
fi
echo "run_fuzz: building ${targets[*]}"
if ! cmake --build "$build" -j "$jobs" --target "${targets[@]}"; then
  echo "run_fuzz: build failed" >&2
  exit 2
fi
built=$(date +%s)

runs=$(mktemp -d "${TMPDIR:-/tmp}/flynn-fuzz.XXXXXX")
trap 'rm -rf "$runs"' EXIT
failed=()
for t in "${targets[@]}"; do
  work="$runs/$t"
  mkdir -p "$work/corpus"
  cp -R "$root/fuzz/corpus/$t/." "$work/corpus/"
  artifacts="$build/fuzz-artifacts/$t"
  mkdir -p "$artifacts"
  args=(-max_total_time="$secs" -max_len="$max_len" -timeout=10 -rss_limit_mb=2048
        -artifact_prefix="$artifacts/" -print_final_stats=1)
  [ -f "$root/fuzz/dict/$t.dict" ] && args+=(-dict="$root/fuzz/dict/$t.dict")
  echo "run_fuzz: $t for ${secs}s"
  set +e
  "$build/fuzz/$t" "${args[@]}" "$work/corpus" >"$work/log" 2>&1
  rc=$?
  set -e
  execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$work/log" | grep -o '[0-9]*$' || true)
  if [ $rc -ne 0 ]; then
    failed+=("$t")
    echo "run_fuzz: $t FAILED (exit $rc); reproducers in $artifacts/:" >&2
    ls -1 "$artifacts" >&2 || true
    tail -n 60 "$work/log" >&2
  else
    echo "run_fuzz: $t ok (${execs:-?} runs, corpus $(ls -1 "$work/corpus" | wc -l) files)"
  fi
  if [ -n "${FLYNN_FUZZ_KEEP:-}" ]; then
    mkdir -p "$build/fuzz-runs"
    rm -rf "$build/fuzz-runs/$t"
    cp -R "$work" "$build/fuzz-runs/$t"
  fi
done
end=$(date +%s)
echo "run_fuzz: build $((built - start))s, fuzzing $((end - built))s"
if [ ${#failed[@]} -gt 0 ]; then
  echo "run_fuzz: problems found by: ${failed[*]}" >&2
  exit 1
fi
echo "run_fuzz: no problems found"
