# Sourced by check-runtime-only.sh and check-runtime-nocuda.sh: the one way
# they configure and build a runtime-only tree, in a clean directory, with no
# MLIR_DIR or LLVM_DIR and CMake told to ignore the LLVM prefix (any find_*
# for it fails), plus whatever prefixes and options each check adds.
#   build_runtime_only BUILD LABEL IGNORED_PREFIXES PYTHON [CMAKE_ARGS...]
# prints "LABEL: N s (C cores)"; on failure, the log's tail, and exits.
build_runtime_only() {
  local build=$1 label=$2 ignored=$3 python=$4 llvm=/usr/lib/llvm-22
  shift 4
  rm -rf "$build"
  local start=$SECONDS
  cmake -S "$ROOT" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DTRACEIR_RUNTIME_ONLY=ON \
    -DCMAKE_IGNORE_PREFIX_PATH="$ignored" \
    -DCMAKE_IGNORE_PATH="$llvm/lib/cmake/llvm;$llvm/lib/cmake/mlir" \
    -DPython_EXECUTABLE="$python" "$@" >"$build.cmake.log" 2>&1 ||
    { cat "$build.cmake.log"; exit 1; }
  ninja -C "$build" >"$build.ninja.log" 2>&1 || { grep -v '^\[' "$build.ninja.log" | tail -40; exit 1; }
  echo "$label: $((SECONDS - start)) s ($(nproc) cores)"
}
