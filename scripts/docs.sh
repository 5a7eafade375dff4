#!/usr/bin/env bash
# Builds the documentation site into build/docs/html (open build/docs/html/index.html):
# the user guide and design pages (docs/, Markdown through MyST), and the reference made
# from the code: the CLI's commands and flags (`flynn cli-reference`), the settings table,
# the Python API (autodoc + numpydoc, from the installed package) and the C++ API (Doxygen
# XML of include/flynn through breathe). Every tool is a Debian package (scripts/setup.sh);
# nothing is fetched. Doxygen and Sphinx warnings are errors. Then the reference check
# (tests/docs/check_reference.py) fails when a flag, a setting or a public name has no entry.
#
# Needs build/flynn (built here: that target only, incrementally) and the Python package in
# build-python/venv (installed here as scripts/test.sh's python stage installs it;
# FLYNN_DOCS_REUSE_VENV=1 keeps an installed one).
set -euo pipefail
cd "$(dirname "$0")/.."
JOBS=${JOBS:-$(nproc)}
OUT=build/docs
VENV=build-python/venv
export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$PWD} CCACHE_NOHASHDIR=${CCACHE_NOHASHDIR:-true}

if [ -f build/CMakeCache.txt ]; then
  cmake --build build -j"$JOBS" --target flynn
else
  JOBS=$JOBS BUILD_TARGETS=flynn bash scripts/build.sh
fi

if [ "${FLYNN_DOCS_REUSE_VENV:-0}" != 1 ] || ! "$VENV/bin/python" -c "import flynn" 2>/dev/null; then
  # Debian's interpreter by name: the first python3 on PATH may lack Debian's packages.
  [ -x "$VENV/bin/python" ] || /usr/bin/python3 -m venv --system-site-packages "$VENV"
  FLYNN_BUILD_JOBS=$JOBS "$VENV/bin/pip" install --quiet --no-build-isolation --no-index .
fi

rm -rf "$OUT/doxygen" "$OUT/html" "$OUT/doctrees"
mkdir -p "$OUT/doxygen"
(cat docs/Doxyfile; echo "OUTPUT_DIRECTORY=$OUT/doxygen") | doxygen - 2> "$OUT/doxygen/warnings.txt"
if [ -s "$OUT/doxygen/warnings.txt" ]; then
  cat "$OUT/doxygen/warnings.txt" >&2
  echo "docs: Doxygen warned (above); fix the documentation comments" >&2
  exit 1
fi

FLYNN_CLI="$PWD/build/flynn" FLYNN_DOXYGEN_XML="$PWD/$OUT/doxygen/xml" \
FLYNN_VERSION="$(build/flynn --version | sed 's/^flynn //')" \
  "$VENV/bin/python" -m sphinx -W --keep-going -q -b html -d "$OUT/doctrees" docs "$OUT/html"

"$VENV/bin/python" tests/docs/check_reference.py --html "$OUT/html" --cli build/flynn \
  --doxygen-xml "$OUT/doxygen/xml"
echo "docs: $OUT/html/index.html"
