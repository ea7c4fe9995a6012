#!/usr/bin/env bash
# The CUDA tier, for a machine with a GPU: builds, then runs every PyTorch-
# oracle op and graph test on cuda (TRACEIR_DEVICE=cuda) plus the CUDA-only
# tests (among them the compiler's generated kernels against the runtime's,
# test_generated_kernels.py), prints what ran and what failed, and last the
# kernel times of generated vs hand-written kernels (bench/lowering_bench.py).
# Meant to finish in under 9 minutes. Usage: scripts/gpu-check.sh [pytest args...]
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="${TRACEIR_VENV:-$HOME/.cache/traceir/venv}"
"$ROOT/scripts/setup.sh" || exit 1
"$ROOT/scripts/build.sh" "$ROOT/build" || exit 1
command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=index,name,memory.total --format=csv
echo "== unit tests (the two-device test runs where two GPUs answer, and profiles both)"
TRACES="$ROOT/build/test-traces"
rm -rf "$TRACES" && mkdir -p "$TRACES"
TWO="$TRACES/two-cuda-devices.json"
TRACEIR_TEST_TRACE_DIR="$TRACES" "$ROOT/build/bin/TraceIRUnitTests" --gtest_brief=1 || status=1
if [[ -f $TWO ]]; then
  echo "== validating the two-device trace"
  "$VENV/bin/python" "$ROOT/test/python/trace_validator.py" "$TWO" && echo "valid: $TWO" || status=1
fi
echo "== CUDA tier: pytest with TRACEIR_DEVICE=cuda"
cd "$ROOT" && TRACEIR_BUILD="$ROOT/build" TRACEIR_DEVICE=cuda \
  timeout 450 "$VENV/bin/python" -m pytest -q -rs -p no:cacheprovider test/python "$@" || status=1
echo "== generated vs hand-written kernel times (bench/lowering_bench.py)"
timeout 90 "$VENV/bin/python" "$ROOT/bench/lowering_bench.py" --repeat 1 --runs 10 || status=1
exit "${status:-0}"
