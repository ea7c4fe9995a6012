#!/usr/bin/env bash
# Builds the runtime-only tree without CUDA (TRACEIR_ENABLE_CUDA=OFF), as a
# machine without a CUDA toolkit builds it, in a clean directory with LLVM and
# the CUDA toolkit out of reach, and checks it: one configure line says why
# there is no CUDA, no compile command is nvcc's or names the toolkit, no
# output needs a CUDA library (readelf -d, ldd; nm -u of the static runtime);
# trace-exec, the Python module and a C++ program embedding the installed
# package (examples/embed) run a CPU saved executable; and each refuses a
# saved executable for cuda, or a cuda device, with the one error that says
# the runtime was built without CUDA. The saved executables come from the
# full build's tools (TRACEIR_FULL_BUILD, default build/). Run by
# check-runtime-only.sh. Usage: scripts/check-runtime-nocuda.sh BUILD_DIR
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="${1:?usage: scripts/check-runtime-nocuda.sh BUILD_DIR [CMAKE_ARGS...]}"
FULL="${TRACEIR_FULL_BUILD:-$ROOT/build}/bin"
VENV="${TRACEIR_VENV:-$HOME/.cache/traceir/venv}"
PY="$VENV/bin/python"
LLVM_PREFIX=/usr/lib/llvm-22
CUDA_PREFIX=/usr/local/cuda
NO_CUDA="this TraceIR runtime was built without CUDA"
CUDA_LIBS='libcudart|libcublas|libcuda\.|libcudnn|libnvrtc|libnvJitLink'
fail() { echo "check-runtime-nocuda: $*"; exit 1; }
[[ -x $FULL/trace-translate ]] || fail "$FULL/trace-translate is missing (the full build makes the saved executables)"

source "$ROOT/scripts/lib/runtime-only-build.sh"
start=$SECONDS
build_runtime_only "$BUILD" "runtime-only build without CUDA" "$LLVM_PREFIX;$CUDA_PREFIX" "$PY" \
  -DTRACEIR_ENABLE_CUDA=OFF "${@:2}"

# One configure line, saying why.
[[ $(grep -c "without CUDA" "$BUILD.cmake.log") == 1 ]] ||
  fail "expected one configure line about CUDA:$(echo; grep -i cuda "$BUILD.cmake.log")"
grep "without CUDA (TRACEIR_ENABLE_CUDA=OFF)" "$BUILD.cmake.log" | sed 's/^-- /  configure: /' ||
  fail "the configure line does not say TRACEIR_ENABLE_CUDA=OFF"
grep -q "^set(TraceIRRuntime_HAS_CUDA OFF)" "$BUILD/TraceIRRuntimeConfig.cmake" ||
  fail "TraceIRRuntimeConfig.cmake does not say TraceIRRuntime_HAS_CUDA OFF"
if grep -E "nvcc|\.cu\"|$CUDA_PREFIX|$LLVM_PREFIX" "$BUILD/compile_commands.json"; then
  fail "a compile command is nvcc's, compiles a .cu or names $CUDA_PREFIX or $LLVM_PREFIX"
fi
outputs=("$BUILD/bin/trace-exec" "$BUILD"/python/traceir/_traceir*.so)
for f in "${outputs[@]}"; do
  [[ -f $f ]] || fail "$f was not built"
  if readelf -d "$f" | grep NEEDED | grep -Ei "$CUDA_LIBS|llvm|mlir"; then fail "$f needs CUDA or LLVM"; fi
  if ldd "$f" | grep -Ei "$CUDA_LIBS|$CUDA_PREFIX"; then fail "$f loads a CUDA library"; fi
done
# The static runtime too: a program linking it must not need CUDA.
if nm -u "$BUILD/lib/Runtime/libTraceIRRuntime.a" | grep -E ' (cuda|cublas|cudnn)[A-Z_]'; then
  fail "libTraceIRRuntime.a calls CUDA"
fi
"$BUILD/bin/trace-exec" --version | grep -q "CUDA none" || fail "trace-exec --version does not say 'CUDA none'"

# A CPU and a cuda saved executable of test/Runtime/mlp.mlir (its values are
# in its FP lines), from the full build.
cases="$BUILD/cases" st="python3 $ROOT/test/Runtime/Inputs/st.py"
mkdir -p "$cases"
$st write "$cases/params.st" fc.weight=f32[4,3]:1,0,0,0,1,0,0,0,1,1,1,1 fc.bias=f32[4]:0,0,0,-100
$st write "$cases/inputs.st" x=f32[2,3]:1,2,3,-1,-2,-3
"$FULL/trace-opt" "$ROOT/test/Runtime/mlp.mlir" --free-dead-tensors -o "$cases/mlp.mlir"
"$FULL/trace-translate" "$cases/mlp.mlir" --emit-executable --device cpu -o "$cases/mlp.trx"
"$FULL/trace-translate" "$cases/mlp.mlir" --emit-executable --device cuda -o "$cases/mlp-cuda.trx"
"$FULL/trace-opt" "$ROOT/test/Runtime/views.mlir" --free-dead-tensors -o "$cases/views.mlir"
"$FULL/trace-translate" "$cases/views.mlir" --emit-executable --device cpu -o "$cases/views.trx"

# trace-exec runs the CPU file with its frees checked, to mlp.mlir's values
# and the predicted peak.
exec_args=(--params "$cases/params.st" --inputs "$cases/inputs.st")
"$BUILD/bin/trace-exec" "$cases/mlp.trx" "${exec_args[@]}" --outputs "$cases/out.st" \
  --memory-report --check-frees >"$cases/exec.log" || { cat "$cases/exec.log"; fail "trace-exec failed on mlp.trx"; }
grep -q "peak 80 bytes measured, 80 bytes predicted (equal)" "$cases/exec.log" ||
  { cat "$cases/exec.log"; fail "mlp.trx: not the predicted peak"; }
$st dump "$cases/out.st" | python3 "$ROOT/test/lib/fpcheck.py" "$ROOT/test/Runtime/mlp.mlir" ||
  fail "mlp.trx: not mlp.mlir's values"
# ... and refuses cuda: a file for cuda (run or described), or the CPU file on
# cuda:1, with the one error, a non-zero status and no outputs written.
refuse() {
  local what="$1" rc=0
  shift
  rm -f "$cases/out.st"
  "$BUILD/bin/trace-exec" "$@" >"$cases/refused.log" 2>&1 || rc=$?
  [[ $rc != 0 ]] || fail "trace-exec $what: exit status 0 without CUDA"
  grep -q "^trace-exec: error: .*$NO_CUDA .*; it runs on the CPU only$" "$cases/refused.log" ||
    { cat "$cases/refused.log"; fail "trace-exec $what: not the no-CUDA error"; }
  [[ $(wc -l <"$cases/refused.log") == 1 ]] || { cat "$cases/refused.log"; fail "trace-exec $what: more than one line"; }
  [[ ! -e $cases/out.st ]] || fail "trace-exec $what wrote outputs"
}
refuse "on a file for cuda" "$cases/mlp-cuda.trx" "${exec_args[@]}" --outputs "$cases/out.st"
refuse "--describe of a file for cuda" "$cases/mlp-cuda.trx" --describe
refuse "--device cuda:1" "$cases/mlp.trx" "${exec_args[@]}" --outputs "$cases/out.st" --device cuda:1
sed 's/^/  trace-exec on cuda: /' "$cases/refused.log"

# The Python module: imports, runs the CPU file, raises TraceIRError for cuda.
PYTHONPATH="$BUILD/python" "$PY" "$ROOT/test/python/nocuda_smoke.py" "$BUILD" "$cases" | sed 's/^/  /'

# The installed package needs no CUDA toolkit: a C++ program embedding it
# configures with the toolkit out of reach, runs the CPU file, and refuses
# the cuda one.
prefix="$BUILD/install" embed="$BUILD/embed"
cmake --install "$BUILD" --prefix "$prefix" --component runtime >/dev/null
cmake -S "$ROOT/examples/embed" -B "$embed" -G Ninja -DCMAKE_PREFIX_PATH="$prefix" \
  -DCMAKE_IGNORE_PREFIX_PATH="$CUDA_PREFIX" "${@:2}" >"$embed.cmake.log" 2>&1 ||
  { cat "$embed.cmake.log"; fail "examples/embed does not configure against the runtime without CUDA"; }
if grep -q "CUDAToolkit" "$embed/CMakeCache.txt"; then fail "find_package(TraceIRRuntime) looked for CUDAToolkit"; fi
ninja -C "$embed" >"$embed.ninja.log" 2>&1 || { tail -40 "$embed.ninja.log"; fail "examples/embed does not build"; }
if readelf -d "$embed/embed" | grep NEEDED | grep -Ei "$CUDA_LIBS"; then fail "examples/embed needs CUDA"; fi
"$embed/embed" "$cases/views.trx" >"$embed.log" || { cat "$embed.log"; fail "embed failed on views.trx"; }
grep -q "(equal)" "$embed.log" || { cat "$embed.log"; fail "embed: not the predicted peak"; }
if "$embed/embed" "$cases/mlp-cuda.trx" >"$embed.log" 2>&1 || ! grep -q "$NO_CUDA" "$embed.log"; then
  cat "$embed.log"
  fail "embed on a file for cuda: not the no-CUDA error"
fi

# With CUDA left on but no CUDA compiler, the build falls back and says why
# (configure only).
cmake -S "$ROOT" -B "$BUILD/no-compiler" -G Ninja -DTRACEIR_RUNTIME_ONLY=ON -DCMAKE_CUDA_COMPILER= \
  -DTRACEIR_BUILD_PYTHON=OFF -DCMAKE_IGNORE_PREFIX_PATH="$LLVM_PREFIX" >"$BUILD/no-compiler.log" 2>&1 ||
  { cat "$BUILD/no-compiler.log"; fail "configuring with no CUDA compiler failed"; }
grep "without CUDA (no working CUDA compiler" "$BUILD/no-compiler.log" | sed 's/^-- /  configure: /' ||
  fail "with no CUDA compiler, the configure line does not say so"
echo "runtime-only build without CUDA: no CUDA in its compile commands or outputs (${#outputs[@]} checked); it runs a CPU .trx (trace-exec, Python, examples/embed) and refuses cuda with one error; $((SECONDS - start)) s in all"
