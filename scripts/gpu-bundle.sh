#!/usr/bin/env bash
# Writes a GPU bundle: everything a GPU machine without LLVM, MLIR or a
# network needs to run TraceIR's GPU tier (docs/GPU.md). Run it here, on the
# CPU machine, after the full build (scripts/build.sh). Usage:
#   scripts/gpu-bundle.sh OUT [pytest args...]
# OUT gets:
#   src/          the runtime-only build's sources (CMakeLists.txt, cmake/,
#                 the runtime, its API and Python module, trace-exec, the
#                 trace validator)
#   third_party/  the header-only libraries the runtime builds with
#                 (FlatBuffers 2.0.8, nlohmann/json), with a CMake package
#   cases.tar.xz  every case the pytest tier runs with TRACEIR_DEVICE=cuda,
#                 saved for cuda and cpu with inputs, parameters and expected
#                 outputs (test/python/bundle_record.py), in one archive
#   run.sh        builds and runs it all there; run.sh --device cpu here
# With TRACEIR_BUNDLE_RECORDED=1, OUT/cases already holds the cases (the
# pytest tier recorded them alongside its own run: TRACEIR_BUNDLE_ALONGSIDE
# in bundle_record.py, as scripts/test.sh does) and only the rest is written.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
OUT="${1:?usage: scripts/gpu-bundle.sh OUT [pytest args...]}"
shift
BUILD="${TRACEIR_BUILD:-$ROOT/build}"
VENV="${TRACEIR_VENV:-$HOME/.cache/traceir/venv}"
[[ -x $BUILD/bin/trace-translate ]] || "$ROOT/scripts/build.sh" "$BUILD"
if [[ "${TRACEIR_BUNDLE_RECORDED:-0}" == 1 ]]; then
  [[ -d $OUT/cases || -f $OUT/cases.tar.xz ]] ||
    { echo "gpu-bundle: no recorded cases in $OUT/cases"; exit 1; }
  rm -rf "$OUT/src" "$OUT/third_party" "$OUT/run.sh" "$OUT/run_cases.py"
  mkdir -p "$OUT/src" "$OUT/third_party/include"
  OUT="$(cd "$OUT" && pwd)"
else
  rm -rf "$OUT"
  mkdir -p "$OUT/src" "$OUT/cases" "$OUT/third_party/include"
  OUT="$(cd "$OUT" && pwd)"

  echo "== recording the cases (the pytest tier with TRACEIR_DEVICE=cuda, run on the CPU)"
  # The tests run on the CPU while recording; tests that check what only a
  # GPU shows (its memory report, its second device) fail here and are
  # cases all the same.
  (cd "$ROOT" && TRACEIR_BUILD="$BUILD" TRACEIR_DEVICE=cuda TRACEIR_BUNDLE_DIR="$OUT/cases" \
    "$VENV/bin/python" -m pytest -q -p no:cacheprovider test/python "$@" >"$OUT/record.log" 2>&1) || true
  tail -n 1 "$OUT/record.log" | sed 's/^/  pytest while recording: /'
fi
if [[ -d $OUT/cases ]]; then
  # A test may stop before it finished a case: keep only whole ones.
  for c in "$OUT"/cases/*/; do [[ -f $c/case.json ]] || rm -rf "$c"; done
  echo "== packing $(ls "$OUT/cases" | wc -l) cases (xz)"
  # One xz archive: the cases' tensors and executables shrink to under half
  # (CI's 3029 cases: 43.9 MiB of files, 17.3 MiB packed), and the bundle
  # must fit 64 MiB with the working tree. run.sh unpacks it beside its
  # build. xz here (scripts/setup.sh); the GPU machine reads it with
  # Python's tarfile.
  rm -f "$OUT/cases.tar.xz"
  tar -C "$OUT" --sort=name -cf - cases | xz -6 -T2 >"$OUT/cases.tar.xz.part"
  mv "$OUT/cases.tar.xz.part" "$OUT/cases.tar.xz"
  rm -rf "$OUT/cases"
fi

echo "== sources of the runtime-only build"
cd "$ROOT"
git ls-files -- CMakeLists.txt cmake include/TraceIR/Ops.def include/TraceIR/Runtime \
  include/TraceIR/Support include/TraceIR/API lib/Runtime lib/Support lib/API \
  tools/trace-exec python \
  test/python/trace_validator.py | tar -cf - -T - | tar -xf - -C "$OUT/src"
cp -r /usr/include/flatbuffers "$OUT/third_party/include/"
cp -r /usr/include/nlohmann "$OUT/third_party/include/"
mkdir -p "$OUT/third_party/share/cmake/nlohmann_json"
cat >"$OUT/third_party/share/cmake/nlohmann_json/nlohmann_jsonConfig.cmake" <<'CMAKE'
# nlohmann/json 3.11 headers as they travel in a GPU bundle.
if(NOT TARGET nlohmann_json::nlohmann_json)
  add_library(nlohmann_json::nlohmann_json INTERFACE IMPORTED)
  set_target_properties(nlohmann_json::nlohmann_json PROPERTIES
    INTERFACE_INCLUDE_DIRECTORIES "${CMAKE_CURRENT_LIST_DIR}/../../../include")
endif()
set(nlohmann_json_VERSION 3.11.2)
CMAKE
cat >"$OUT/third_party/share/cmake/nlohmann_json/nlohmann_jsonConfigVersion.cmake" <<'CMAKE'
set(PACKAGE_VERSION 3.11.2)
if(PACKAGE_FIND_VERSION VERSION_GREATER PACKAGE_VERSION)
  set(PACKAGE_VERSION_COMPATIBLE FALSE)
else()
  set(PACKAGE_VERSION_COMPATIBLE TRUE)
endif()
CMAKE
cp scripts/bundle/run.sh scripts/bundle/run_cases.py "$OUT/"

echo "== the per-op benchmark's cases (bench/gpu_ops.py)"
# kernel_bench.py's ops, saved for cuda: run.sh times each there at both
# tiers beside eager (the inputs are drawn there with kernel_bench's seed).
rm -rf "$OUT/ops"
mkdir -p "$OUT/ops"
cp bench/gpu_ops.py bench/kernel_bench.py "$OUT/ops/"
TRACEIR_BUILD="$BUILD" "$VENV/bin/python" bench/gpu_ops.py --save "$OUT/ops/cases" | sed 's/^/  /'

echo "== sizes"
# Bytes as they travel (the files' own sizes, not disk blocks or folder
# entries), in KiB.
size() { find "$1" -type f -printf '%s\n' | awk '{s += $1} END {print int(s / 1024)}'; }
tree_kb=$(git ls-files -z | xargs -0 stat -c %s 2>/dev/null | awk '{s += $1} END {print int(s / 1024)}')
total=0
for part in src third_party cases.tar.xz ops run.sh run_cases.py; do
  kb=$(size "$OUT/$part"); total=$((total + kb))
  printf '  %-14s %8d KiB\n' "$part" "$kb"
done
ncases=$(tar -tJf "$OUT/cases.tar.xz" | grep -c '^cases/[^/]*/case.json$')
printf '  %-14s %8d KiB (%d cases)\n' "bundle" "$total" "$ncases"
printf '  %-14s %8d KiB (git ls-files)\n' "working tree" "$tree_kb"
limit=$((64 * 1024))
if (( total + tree_kb > limit )); then
  echo "gpu-bundle: $((total + tree_kb)) KiB with the working tree, over the 64 MiB a GPU machine takes"
  exit 1
fi
echo "wrote $OUT: $((total + tree_kb)) KiB with the working tree, of 65536. On the GPU machine: $OUT/run.sh"
