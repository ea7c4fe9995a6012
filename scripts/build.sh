#!/usr/bin/env bash
# Configures and builds TraceIR. Usage: scripts/build.sh [BUILD_DIR] [CMAKE_ARGS...]
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="${1:-$ROOT/build}"
shift || true
mkdir -p "$BUILD"
# The Python bindings build against the test environment's Python, which
# has nanobind (scripts/setup.sh).
VENV="${TRACEIR_VENV:-$HOME/.cache/traceir/venv}"
PYTHON_ARGS=()
[[ -x "$VENV/bin/python" ]] && PYTHON_ARGS=(-DPython_EXECUTABLE="$VENV/bin/python")
if ! cmake -S "$ROOT" -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DMLIR_DIR=/usr/lib/llvm-22/lib/cmake/mlir "${PYTHON_ARGS[@]}" "$@" >"$BUILD/cmake.log" 2>&1; then
  cat "$BUILD/cmake.log"
  exit 1
fi
if ! ninja -C "$BUILD" >"$BUILD/ninja.log" 2>&1; then
  grep -v '^\[[0-9]*/[0-9]*\]' "$BUILD/ninja.log" | tail -n 200
  echo "build failed: full log in $BUILD/ninja.log"
  exit 1
fi
echo "built $BUILD"
