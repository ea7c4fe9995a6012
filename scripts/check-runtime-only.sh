#!/usr/bin/env bash
# Builds the runtime-only tree (TRACEIR_RUNTIME_ONLY) in a clean directory
# with LLVM and MLIR out of reach, and proves they stayed out: no compile
# command names the LLVM prefix, and no output needs a library from it
# (readelf -d, ldd). As on a GPU machine without a BLAS, the CPU GEMM is the
# portable one. Then the same tree without CUDA, in BUILD_DIR-nocuda
# (scripts/check-runtime-nocuda.sh). Usage:
# scripts/check-runtime-only.sh BUILD_DIR [CMAKE_ARGS...]
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="${1:?usage: scripts/check-runtime-only.sh BUILD_DIR}"
VENV="${TRACEIR_VENV:-$HOME/.cache/traceir/venv}"
LLVM_PREFIX=/usr/lib/llvm-22
source "$ROOT/scripts/lib/runtime-only-build.sh"
build_runtime_only "$BUILD" "runtime-only build" "$LLVM_PREFIX" "$VENV/bin/python" \
  -DTRACEIR_USE_BLAS=OFF "${@:2}"
if grep -q "$LLVM_PREFIX" "$BUILD/compile_commands.json"; then
  echo "check-runtime-only: a compile command names $LLVM_PREFIX:"
  grep -o "[^ ]*$LLVM_PREFIX[^ ]*" "$BUILD/compile_commands.json" | sort -u | head
  exit 1
fi
outputs=("$BUILD/bin/trace-exec" "$BUILD"/python/traceir/_traceir*.so)
for f in "${outputs[@]}"; do
  [[ -f $f ]] || { echo "check-runtime-only: $f was not built"; exit 1; }
  if readelf -d "$f" | grep NEEDED | grep -Ei 'llvm|mlir'; then
    echo "check-runtime-only: $f needs LLVM/MLIR"; exit 1
  fi
  if ldd "$f" | grep -E "$LLVM_PREFIX|libLLVM|libMLIR"; then
    echo "check-runtime-only: $f loads a library from LLVM"; exit 1
  fi
done
grep -q "portable GEMM" "$BUILD.cmake.log" || { echo "check-runtime-only: not the portable GEMM"; exit 1; }
echo "runtime-only build: no LLVM/MLIR in its compile commands or its outputs' libraries (${#outputs[@]} checked)"
grep -q "TraceIR CUDA: CUDA" "$BUILD.cmake.log" || { echo "check-runtime-only: the CUDA backend was not built"; exit 1; }
"$ROOT/scripts/check-runtime-nocuda.sh" "$BUILD-nocuda" "${@:2}"
