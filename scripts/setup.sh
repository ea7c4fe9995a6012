#!/usr/bin/env bash
# Installs everything TraceIR needs on Debian 12 (bookworm): LLVM/MLIR 22
# (from bookworm-security), CMake, Ninja, a C++ compiler, GoogleTest,
# OpenBLAS and oneDNN (the optimized CPU kernels' GEMM, convolution and
# pooling; both optional to the build), nlohmann-json (the safetensors
# reader), FlatBuffers (saved executables; flatc only checks the committed
# header), Python 3 for lit and xz (the GPU bundle's cases archive). Safe to
# run again; it only installs what is missing. `--bench` also installs
# bench/requirements.txt (transformers, for bench/ir_bench.py's GPT-2) into
# the Python environment; the tests do not need it.
set -euo pipefail

BENCH=0
for arg in "$@"; do
  case "$arg" in
    --bench) BENCH=1 ;;
    *) echo "setup: unknown argument '$arg' (expected --bench)" >&2; exit 2 ;;
  esac
done

PACKAGES=(
  cmake ninja-build g++ python3 python3-venv python3-dev libopenblas-dev
  libmlir-22-dev mlir-22-tools llvm-22-dev llvm-22-tools llvm-22-linker-tools
  libgtest-dev nlohmann-json3-dev libflatbuffers-dev flatbuffers-compiler
  libdnnl-dev xz-utils
)

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  SUDO=""
  [[ $(id -u) -ne 0 ]] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
echo "setup: LLVM/MLIR $(/usr/lib/llvm-22/bin/llvm-config --version), $(cmake --version | head -1)"

# The Python test tier (PyTorch is the oracle) runs in a virtual environment
# kept outside the checkout, rebuilt when requirements-test.txt changes.
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="${TRACEIR_VENV:-$HOME/.cache/traceir/venv}"
STAMP="$VENV/.requirements.sha256"
WANT="$(sha256sum "$ROOT/requirements-test.txt" | cut -d' ' -f1)"
if [[ ! -x "$VENV/bin/python" || "$(cat "$STAMP" 2>/dev/null)" != "$WANT" ]]; then
  echo "setup: installing the Python test requirements into $VENV"
  python3 -m venv "$VENV"
  "$VENV/bin/pip" install -q --disable-pip-version-check -r "$ROOT/requirements-test.txt"
  echo "$WANT" >"$STAMP"
fi
if ((BENCH)); then
  BENCH_STAMP="$VENV/.bench-requirements.sha256"
  BENCH_WANT="$(sha256sum "$ROOT/bench/requirements.txt" | cut -d' ' -f1)"
  if [[ "$(cat "$BENCH_STAMP" 2>/dev/null)" != "$BENCH_WANT" ]]; then
    echo "setup: installing the benchmarks' Python requirements into $VENV"
    "$VENV/bin/pip" install -q --disable-pip-version-check -r "$ROOT/bench/requirements.txt"
    echo "$BENCH_WANT" >"$BENCH_STAMP"
  fi
fi
echo "setup: $("$VENV/bin/python" -c 'import torch; print("torch", torch.__version__)')"
