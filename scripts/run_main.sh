#!/usr/bin/env bash
# The main job on a fresh Debian machine: install what is needed, build, then train and
# evaluate on Fashion-MNIST (flynn's defaults and the paper's setting) beside exact kNN.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/build.sh
./build/flynn demo "$@"
