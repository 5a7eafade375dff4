#!/usr/bin/env bash
# Cross-compiles flynn's core library and its tests (flynn_core_tests) for aarch64 with
# Debian's cross toolchain and runs them under qemu-user: once on a CPU with SVE and SVE2
# (qemu's "max"), once on a NEON-only CPU (cortex-a72), so that Highway's dispatch takes
# its SVE targets in the first run and NEON in the second. Each run also repeats the
# kernel tests with the target pinned to NEON (FLYNN_SIMD_TARGET), and the tests iterate
# every target Highway compiled that the CPU runs.
#
#   bash scripts/cross_arm64.sh              # install what is missing, build, run both CPUs
#   SKIP_INSTALL=1 bash scripts/cross_arm64.sh
#   JOBS=2 BUILD_DIR=build-arm64 bash scripts/cross_arm64.sh
#
# Installs (when missing) g++-aarch64-linux-gnu and qemu-user with apt, and adds dpkg's
# arm64 architecture so that apt can fetch the arm64 -dev packages the core needs
# (Highway, GoogleTest, fmt, zlib): those are downloaded and unpacked into a private
# sysroot in the build folder, not installed, so that the host's own packages (whose
# arm64 twins would have to be the same versions) stay as they are. nlohmann-json is
# header-only and taken from the host. Needs root or sudo for apt; building and running
# take about 20 minutes of a 2-core machine, so it is not a CI stage.
set -euo pipefail
cd "$(dirname "$0")/.."
JOBS=${JOBS:-$(nproc)}
BUILD_DIR=${BUILD_DIR:-build-arm64}
TRIPLE=aarch64-linux-gnu
SYSROOT="$PWD/$BUILD_DIR/sysroot"

install_packages() {
  local pkgs=(g++-aarch64-linux-gnu qemu-user nlohmann-json3-dev)
  local missing=()
  for p in "${pkgs[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  local arch_missing=0
  dpkg --print-foreign-architectures | grep -qx arm64 || arch_missing=1
  [ ${#missing[@]} -eq 0 ] && [ $arch_missing -eq 0 ] && return 0
  local sudo=""
  if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
  [ $arch_missing -eq 0 ] || $sudo dpkg --add-architecture arm64
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -qq
  [ ${#missing[@]} -eq 0 ] || $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
}

# The arm64 libraries the core and its tests link, unpacked into $SYSROOT.
make_sysroot() {
  local debs="$BUILD_DIR/debs"
  [ -f "$SYSROOT/.complete" ] && return 0
  mkdir -p "$debs" "$SYSROOT"
  (cd "$debs" && apt-get download libhwy-dev:arm64 libhwy1:arm64 libgtest-dev:arm64 \
      libgmock-dev:arm64 libfmt-dev:arm64 libfmt9:arm64 zlib1g-dev:arm64 zlib1g:arm64)
  for d in "$debs"/*.deb; do dpkg-deb -x "$d" "$SYSROOT"; done
  touch "$SYSROOT/.complete"
}

configure_and_build() {
  mkdir -p "$BUILD_DIR"
  cat > "$BUILD_DIR/toolchain.cmake" <<EOF
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_C_COMPILER ${TRIPLE}-gcc)
set(CMAKE_CXX_COMPILER ${TRIPLE}-g++)
set(CMAKE_LIBRARY_ARCHITECTURE ${TRIPLE})
# The unpacked arm64 packages first, then the host's architecture-independent files
# (nlohmann-json's CMake package); never the host's own libraries.
set(CMAKE_FIND_ROOT_PATH ${SYSROOT} /usr/${TRIPLE} /)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE BOTH)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE BOTH)
# The tests find the unpacked shared libraries when they run under qemu.
set(CMAKE_BUILD_RPATH ${SYSROOT}/usr/lib/${TRIPLE})
set(CMAKE_CROSSCOMPILING_EMULATOR qemu-aarch64;-L;/usr/${TRIPLE})
EOF
  local gen=()
  if command -v ninja >/dev/null && [ ! -f "$BUILD_DIR/CMakeCache.txt" ]; then gen=(-G Ninja); fi
  cmake -S . -B "$BUILD_DIR" "${gen[@]}" -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_TOOLCHAIN_FILE="$PWD/$BUILD_DIR/toolchain.cmake" -DFLYNN_CORE_ONLY=ON
  cmake --build "$BUILD_DIR" -j"$JOBS" --target flynn_core_tests
}

# Runs the core tests on qemu CPU `$1`, writing $BUILD_DIR/results-$1.xml; the kernel tests
# then again pinned to NEON. One test is left out: ParallelFor.WorksInAForkedChild forks a
# process that has threads, which qemu-user cannot emulate (qemu itself aborts in the child,
# "cpu == current_cpu"); it runs natively everywhere else.
run_on_cpu() {
  local cpu=$1 tests="$BUILD_DIR/tests/core/flynn_core_tests"
  echo "cross_arm64: flynn_core_tests on qemu -cpu $cpu"
  QEMU_CPU=$cpu QEMU_LD_PREFIX=/usr/$TRIPLE qemu-aarch64 "$tests" \
    --gtest_filter='-ParallelFor.WorksInAForkedChild' \
    --gtest_output="xml:$BUILD_DIR/results-$cpu.xml" --gtest_brief=1
  echo "cross_arm64: kernel tests on qemu -cpu $cpu, pinned to NEON"
  FLYNN_SIMD_TARGET=neon QEMU_CPU=$cpu QEMU_LD_PREFIX=/usr/$TRIPLE qemu-aarch64 "$tests" \
    --gtest_filter='OneRow*:FlyHasher*:SimdTarget*' \
    --gtest_output="xml:$BUILD_DIR/results-$cpu-neon.xml" --gtest_brief=1
}

[ "${SKIP_INSTALL:-0}" = 1 ] || install_packages
make_sysroot
configure_and_build
status=0
run_on_cpu max || status=1
run_on_cpu cortex-a72 || status=1
for f in "$BUILD_DIR"/results-*.xml; do
  python3 - "$f" <<'EOF'
import sys, xml.etree.ElementTree as ET
r = ET.parse(sys.argv[1]).getroot()
print(f"{sys.argv[1]}: {r.get('tests')} tests, {r.get('failures')} failures, "
      f"{r.get('errors')} errors, {r.get('disabled')} disabled")
EOF
done
exit $status
