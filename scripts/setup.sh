#!/usr/bin/env bash
# Installs every Debian package flynn needs (build, tests, benchmarks, federated, plots,
# the documentation site, reports: cairo draws their figures, headless Chromium checks
# their page).
# Idempotent: packages already present are skipped by apt-get. Needs root or sudo.
set -euo pipefail

PKGS=(
  cmake g++ make clang libclang-rt-14-dev ninja-build ccache
  libgtest-dev libgmock-dev libbenchmark-dev
  libcli11-dev libfmt-dev nlohmann-json3-dev zlib1g-dev
  libhwy-dev libboost-math-dev
  libfaiss-dev libopenblas-dev libopenblas0-pthread libhnswlib-dev
  libopenmpi-dev openmpi-bin
  libssl-dev
  libcairo2-dev fonts-dejavu-core chromium
  libgrpc++-dev libprotobuf-dev protobuf-compiler protobuf-compiler-grpc
  dataset-fashion-mnist
  python3 python3-numpy python3-sklearn python3-scipy python3-matplotlib python3-pandas
  python3-dev python3-venv python3-pip python3-pytest python3-joblib python3-build
  python3-setuptools python3-wheel pybind11-dev python3-pybind11
  python3-dask python3-distributed
  doxygen python3-sphinx python3-myst-parser python3-pydata-sphinx-theme python3-numpydoc python3-breathe
)

missing=()
for p in "${PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "setup: all ${#PKGS[@]} packages present"
  exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
echo "setup: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
