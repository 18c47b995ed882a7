#!/usr/bin/env bash
# Build a fresh virtual environment with the oldest supported Python and dependency
# versions (tools/min-constraints.txt) and run the test suite in it. Not part of CI
# (it takes about 15 minutes on 2 cores); run it after changing a lower bound.
#
# Usage: PYTHON=python3.10 tools/check_min_versions.sh [VENV_DIR] [pytest arguments...]
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
VENV=${1:-${TMPDIR:-/tmp}/spotree-min-venv}
shift || true
PYTHON=${PYTHON:-python3.10}

if [ -e "$VENV" ]; then
    # Only ever delete a virtual environment (one made by an earlier run).
    [ -f "$VENV/pyvenv.cfg" ] || { echo "$VENV exists and is not a venv" >&2; exit 2; }
    rm -rf "$VENV"
fi
"$PYTHON" -m venv "$VENV"
"$VENV/bin/python" -m pip install -q --upgrade pip
"$VENV/bin/python" -m pip install -q -c "$ROOT/tools/min-constraints.txt" -e "$ROOT[dev]"
"$VENV/bin/python" -m pip list --format=freeze | grep -iE '^(numpy|scipy|scikit-learn|joblib|threadpoolctl|highspy|numba|pandas)=='
cd "$ROOT"
# The suite must import this checkout's spotree, not another installed copy.
"$VENV/bin/python" -c "import os, spotree; p = os.path.realpath(spotree.__file__); \
assert p.startswith(os.path.realpath('$ROOT') + os.sep), p"
OMP_NUM_THREADS=1 SPOTREE_CACHE_DIR="$ROOT/.cache/min-versions" \
    exec "$VENV/bin/python" -m pytest -n 2 -p no:cacheprovider -o addopts= -q "$@"
